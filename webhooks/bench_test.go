package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// Benchmark shape: one loopback receiver, 32 sessions, 16 senders.
const (
	benchSessions = 32
	benchWorkers  = 16
)

// countingReceiver answers 204 and signals when it has seen want requests.
func countingReceiver(b *testing.B, want int) (*httptest.Server, <-chan struct{}) {
	var n atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
		if n.Add(1) == int64(want) {
			close(done)
		}
	}))
	b.Cleanup(srv.Close)
	return srv, done
}

// BenchmarkDelivery measures delivery throughput to a loopback receiver
// (the delivery queue: read the event, sign, POST, record the attempt
// durably) beside a baseline of raw net/http POSTs of the same bodies at
// the same concurrency to the same kind of receiver, in the same run.
func BenchmarkDelivery(b *testing.B) {
	// The two take turns in rounds, so that a change of load on the
	// machine falls on each.
	rounds, per := deliveryRounds, b.N/deliveryRounds
	if per < benchSessions*benchWorkers {
		rounds, per = 1, b.N
	}
	b.StopTimer()
	var outbox, raw time.Duration
	for range rounds {
		outbox += benchOutbox(b, per)
		raw += benchRawHTTP(b, per)
	}
	n := float64(rounds * per)
	b.ReportMetric(n/outbox.Seconds(), "deliveries/s")
	b.ReportMetric(n/raw.Seconds(), "baseline-deliveries/s")
}

// deliveryRounds is how many rounds BenchmarkDelivery alternates in.
const deliveryRounds = 4

// benchOutbox delivers n queued deliveries and returns how long it took.
func benchOutbox(b *testing.B, n int) time.Duration {
	st, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	srv, done := countingReceiver(b, n)
	svc := New(Config{
		Store: st, Sealer: fakeSealer{}, Workers: benchWorkers, AllowPrivate: true,
		Client: NewClient(ClientOptions{AllowPrivate: true, MaxConnsPerHost: benchWorkers}),
	})
	ctx := context.Background()
	nd, _, err := svc.prepare(ctx, "", "", core.DestinationSpec{URL: srv.URL}, core.Now())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateDestination(ctx, nd); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, benchSessions)
	for i := range ids {
		res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_bench", Version: 1}, Metadata: map[string]string{"n": fmt.Sprint(i)}}})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = res.Session.ID
	}
	// Queued before the clock starts, in batches, so only delivery counts.
	for i := 0; i < n; {
		batch := min(n-i, 100*benchSessions)
		var wg sync.WaitGroup
		for s, id := range ids {
			k := batch / benchSessions
			if s < batch%benchSessions {
				k++
			}
			wg.Go(func() {
				evs := make([]core.Event, k)
				for k := range evs {
					evs[k] = core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "benchmark message " + strings.Repeat("x", 200)})
				}
				if _, err := st.Append(ctx, id, core.AppendRequest{Events: evs}); err != nil && k > 0 {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		i += batch
	}
	b.StartTimer()
	start := time.Now()
	svc.Start(ctx)
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	if err := svc.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// benchRawHTTP POSTs n envelopes and returns how long it took.
func benchRawHTTP(b *testing.B, n int) time.Duration {
	srv, done := countingReceiver(b, n)
	body, err := json.Marshal(Envelope{
		Type: core.TypeAgentMessage, SessionID: core.NewID(core.PrefixSession), EventID: core.NewID(core.PrefixEvent),
		Metadata: map[string]string{"n": "1"},
		Event:    core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "benchmark message " + strings.Repeat("x", 200)}),
	})
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}}
	var next atomic.Int64
	defer client.CloseIdleConnections()
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range benchWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				resp, err := client.Post(srv.URL, "application/json", strings.NewReader(string(body)))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
	wg.Wait()
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	return elapsed
}
