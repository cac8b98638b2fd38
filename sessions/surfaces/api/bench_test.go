package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const benchSubscribers = 1000

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

// BenchmarkSSEDelivery measures append→delivery latency to 1,000
// subscribers of one session: from the call to Append (which includes the
// fsync) to each stream's receipt. The baseline is a bare net/http handler
// that writes a pre-built event to the same number of streams when told,
// with no store and no hub.
func BenchmarkSSEDelivery(b *testing.B) {
	b.Run("switchboard", func(b *testing.B) {
		e := newAPI(b)
		s := e.session(b, e.agent(b), "")
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: benchSubscribers}}
		streams := openStreams(b, client, e.srv.URL+"/v1/sessions/"+s.ID+"/events", admin, benchSubscribers)
		d := &deliveries{sent: map[uint64]time.Time{}}
		var wg sync.WaitGroup
		for _, resp := range streams {
			wg.Add(1)
			go d.follow(b, resp, uint64(b.N), &wg)
		}
		time.Sleep(100 * time.Millisecond) // let every stream pass its history
		b.ResetTimer()
		for i := range b.N {
			d.mark(uint64(i+1), time.Now())
			e.appendEvents(b, s.ID, 1)
			time.Sleep(20 * time.Millisecond) // one event at a time, not a burst
		}
		wg.Wait()
		b.StopTimer()
		p50, p99 := percentiles(d.lat)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
	})
	b.Run("baseline", func(b *testing.B) {
		var mu sync.Mutex
		var conns []chan []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ch := make(chan []byte, 16)
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
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: benchSubscribers}}
		streams := openStreams(b, client, srv.URL, "x", benchSubscribers)
		d := &deliveries{sent: map[uint64]time.Time{}}
		var wg sync.WaitGroup
		for _, resp := range streams {
			wg.Add(1)
			go d.follow(b, resp, uint64(b.N), &wg)
		}
		time.Sleep(100 * time.Millisecond)
		b.ResetTimer()
		for i := range b.N {
			msg := []byte(fmt.Sprintf("id: %d\nevent: agent.message\ndata: {\"seq\":%d}\n\n", i+1, i+1))
			d.mark(uint64(i+1), time.Now())
			mu.Lock()
			for _, ch := range conns {
				ch <- msg
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
		wg.Wait()
		b.StopTimer()
		p50, p99 := percentiles(d.lat)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
	})
}

// BenchmarkPostEvents measures POST /v1/sessions/{id}/events throughput
// with 64 concurrent clients over 64 sessions (each answer waits for its
// fsync'd commit), beside a bare handler that reads the body and answers
// 202.
func BenchmarkPostEvents(b *testing.B) {
	const clients = 64
	body := `{"events":[{"type":"user.message","text":"` + strings.Repeat("x", 100) + `"}]}`
	run := func(b *testing.B, url func(i int) string, token string) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		var n atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		start := time.Now()
		for c := range clients {
			wg.Go(func() {
				for i := c; i < b.N; i += clients {
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
					n.Add(1)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "req/s")
	}
	b.Run("switchboard", func(b *testing.B) {
		e := newAPI(b)
		agent := e.agent(b)
		ids := make([]string, clients)
		for i := range ids {
			ids[i] = e.session(b, agent, "").ID
		}
		run(b, func(i int) string { return e.srv.URL + "/v1/sessions/" + ids[i] + "/events" }, admin)
	})
	b.Run("baseline", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(202)
		}))
		defer srv.Close()
		run(b, func(int) string { return srv.URL }, "x")
	})
}
