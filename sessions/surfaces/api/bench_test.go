package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/diskfloor"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
)

// deliveries times, per subscriber, when each seq's data line arrived.
type deliveries struct {
	mu   sync.Mutex
	lat  []time.Duration
	sent map[uint64]time.Time
}

// follow reads one stream and records each seq's delivery latency until
// seq last arrives.
func (d *deliveries) follow(b *testing.B, resp *http.Response, last uint64, wg *sync.WaitGroup) {
	defer wg.Done()
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "id: ") {
			continue
		}
		now := time.Now()
		seq, _ := strconv.ParseUint(line[4:], 10, 64)
		d.mu.Lock()
		if t, ok := d.sent[seq]; ok {
			d.lat = append(d.lat, now.Sub(t))
		}
		d.mu.Unlock()
		if seq >= last {
			return
		}
	}
}

func (d *deliveries) mark(seq uint64, t time.Time) {
	d.mu.Lock()
	d.sent[seq] = t
	d.mu.Unlock()
}

func percentiles(lat []time.Duration) (p50, p99 float64) {
	slices.Sort(lat)
	at := func(q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
	}
	return at(0.50), at(0.99)
}

// openStreams opens n SSE streams on url.
func openStreams(b *testing.B, client *http.Client, url, token string, n int) []*http.Response {
	b.Helper()
	out := make([]*http.Response, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Errorf("open stream: %v", err)
				return
			}
			out[i] = resp
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return out
}

// fanOut is one set of streams the SSE benchmark times.
type fanOut struct {
	streams []*http.Response
	send    func(seq uint64) // makes seq's event go out
	d       *deliveries
}

// followAll follows every set's streams until seq n and sends n events to
// each set, the sets taking turns event by event (one at a time, not a
// burst), so that a change of load on the machine falls on each alike.
func followAll(b *testing.B, n int, sets ...*fanOut) {
	var wg sync.WaitGroup
	for _, f := range sets {
		f.d = &deliveries{sent: map[uint64]time.Time{}}
		for _, resp := range f.streams {
			wg.Add(1)
			go f.d.follow(b, resp, uint64(n), &wg)
		}
	}
	b.StopTimer()
	time.Sleep(100 * time.Millisecond) // let every stream pass its history
	b.StartTimer()
	for i := range n {
		seq := uint64(i + 1)
		for _, f := range sets {
			f.d.mark(seq, time.Now())
			f.send(seq)
			time.Sleep(20 * time.Millisecond) // one event at a time, not a burst
		}
	}
	wg.Wait()
}

// benchEvent is the agent.message every SSE benchmark sends.
func benchEvent() core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "m"})
}

// BenchmarkSSEDelivery measures append→delivery latency to the followers
// of one session (10, 100 and 1,000 of them): from the call to Append
// (which includes the fsync) to each stream's receipt. The baseline, in
// the same run, is a bare net/http handler that writes the same frame
// bytes to as many streams when told, with no store and no hub; the two
// take turns.
func BenchmarkSSEDelivery(b *testing.B) {
	for _, n := range []int{10, 100, 1_000} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) { benchSSE(b, n) })
	}
}

func benchSSE(b *testing.B, followers int) {
	// Heartbeats at the served default: a stream sending events sends
	// none, and the bare streams have none.
	e := newAPIHeartbeat(b, 15*time.Second)
	s := e.session(b, e.agent(b), "")
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: followers}}
	streams := openStreams(b, client, e.srv.URL+"/v1/sessions/"+s.ID+"/events", admin, followers)
	var mu sync.Mutex
	var conns []chan []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As deep as a follower's buffer: a slow stream never holds up
		// the broadcast (nor the other set's next event).
		ch := make(chan []byte, 256)
		mu.Lock()
		conns = append(conns, ch)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-ch:
				_, _ = w.Write(msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	bare := openStreams(b, client, srv.URL, "x", followers)
	sb := &fanOut{streams: streams, send: func(uint64) {
		if _, err := e.store.Append(context.Background(), s.ID, core.AppendRequest{Events: []core.Event{benchEvent()}}); err != nil {
			b.Error(err)
		}
	}}
	base := &fanOut{streams: bare, send: func(seq uint64) {
		ev := benchEvent()
		ev.Seq, ev.SessionID = seq, s.ID
		f, err := live.NewFrame(ev)
		if err != nil {
			b.Error(err)
			return
		}
		mu.Lock()
		for _, ch := range conns {
			ch <- f.SSE
		}
		mu.Unlock()
	}}
	b.ResetTimer()
	followAll(b, b.N, sb, base)
	p50, p99 := percentiles(sb.d.lat)
	base50, base99 := percentiles(base.d.lat)
	b.StopTimer()
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(base50, "baseline-p50-ms")
	b.ReportMetric(base99, "baseline-p99-ms")
}

// postClients is how many clients BenchmarkPostEvents runs.
const postClients = 64

// postLoad sends n POSTs from postClients clients, client c to url(c),
// and returns how many were answered 202 and how long they took.
func postLoad(b *testing.B, client *http.Client, n int, url func(c int) string, token, body string) (int64, time.Duration) {
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range postClients {
		wg.Go(func() {
			for i := c; i < n; i += postClients {
				req, _ := http.NewRequest("POST", url(c), strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 202 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return ok.Load(), time.Since(start)
}

// rate is a throughput measured in rounds.
type rate struct {
	n       int64
	elapsed time.Duration
}

func (r *rate) add(n int64, d time.Duration) { r.n, r.elapsed = r.n+n, r.elapsed+d }

func (r rate) perSecond() float64 { return float64(r.n) / r.elapsed.Seconds() }

// postRounds is how many rounds BenchmarkPostEvents alternates its
// servers in, so that a change of load on the machine falls on each.
const postRounds = 4

// BenchmarkPostEvents measures POST /v1/sessions/{id}/events throughput
// with 64 concurrent clients over 64 sessions; each answer waits for its
// fsync'd commit (ack after commit). The servers take turns, in rounds. The baseline, in the same run and on
// the same disk, is a bare handler that reads the body, writes 4 KiB and
// joins a group-committed fdatasync (diskfloor) before its 202; beside it,
// bare-req/s is a handler that commits nothing.
func BenchmarkPostEvents(b *testing.B) {
	body := `{"events":[{"type":"user.message","text":"` + strings.Repeat("x", 100) + `"}]}`
	e := newAPI(b)
	agent := e.agent(b)
	ids := make([]string, postClients)
	for i := range ids {
		ids[i] = e.session(b, agent, "").ID
	}
	floor, err := diskfloor.NewGroup(filepath.Join(filepath.Dir(e.path), "floor"))
	if err != nil {
		b.Fatal(err)
	}
	defer floor.Close()
	committing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if err := floor.Commit(); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.WriteHeader(202)
	}))
	defer committing.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(202)
	}))
	defer bare.Close()
	clients := make([]*http.Client, 3)
	for i := range clients {
		clients[i] = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: postClients}}
		defer clients[i].CloseIdleConnections()
	}
	var sb, base, nocommit rate
	rounds, per := postRounds, b.N/postRounds
	if per < postClients {
		rounds, per = 1, b.N
	}
	b.ResetTimer()
	for range rounds {
		sb.add(postLoad(b, clients[0], per, func(c int) string { return e.srv.URL + "/v1/sessions/" + ids[c] + "/events" }, admin, body))
		base.add(postLoad(b, clients[1], per, func(int) string { return committing.URL }, "x", body))
		nocommit.add(postLoad(b, clients[2], per, func(int) string { return bare.URL }, "x", body))
	}
	b.StopTimer()
	b.ReportMetric(sb.perSecond(), "req/s")
	b.ReportMetric(base.perSecond(), "baseline-req/s")
	b.ReportMetric(nocommit.perSecond(), "bare-req/s")
}
