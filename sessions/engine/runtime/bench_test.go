package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/anthropic"
	"github.com/switchboardhq/switchboard/fixtures/diskfloor"
	"github.com/switchboardhq/switchboard/fixtures/latency"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// wakeSlots is how many sessions the wake benchmark cycles through, so a
// session's next wake finds it held by the runtime but not the last one
// it ran.
const wakeSlots = 16

// wakesPerSession bounds how often one session is woken before a fresh one
// takes its slot. Every wake adds a turn to the log, so a session reused
// for every iteration would make the figure depend on b.N; retiring
// sessions keeps each log within wakesPerSession turns of the log the
// sub-benchmark names. A fresh session's first wake in the runtime reads
// and derives its whole log; the wakes after it read what is new.
const wakesPerSession = 8

// eventsPerTurn is how many events a seeded turn logs.
const eventsPerTurn = 6

// arrival is a request seen by the model server, named by the marker the
// benchmark put in the text it sent.
type arrival struct {
	marker string
	at     time.Time
}

// lastUserText is the text of the last user message of a request: for a
// turn, the input that woke it.
func lastUserText(msgs []core.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	m := msgs[len(msgs)-1]
	if m.Role != core.RoleUser {
		return ""
	}
	for _, b := range m.Content {
		if b.Type == core.BlockText {
			return b.Text
		}
	}
	return ""
}

// enteredHeader carries the time a request reached the server's handler,
// before the fixture reads and parses the body: the fixture's parse into
// the neutral form (about 0.5 ms at p50 for a 15 kB context on this
// machine) is its cost, not the gateway's, and Request.At comes after it.
const enteredHeader = "X-Bench-Entered"

// BenchmarkWakeLatency measures, with fsync on, the time from an input's
// commit (QueueInputs returned) to the model request arriving at the
// scripted Anthropic server (in a process of its own: startModelProcess)
// through the real client.
//
// Its baseline (baseline-p50-ms, baseline-p99-ms) is the least a wake can
// cost on this machine and disk: a goroutine started as a commit starts a
// worker writes 4 KiB and joins a group-committed fdatasync on the same
// disk (diskfloor), since a wake must durably commit its turn before the
// model is asked, then sends a bare HTTP POST to the same server; the
// latency runs from the start to its arrival. post-p50-ms and post-p99-ms
// are the bare POST alone, this machine's loopback HTTP cost.
//
// One wake is in flight at a time: the benchmark waits for its request
// before the next, so the figure is the latency of an unloaded gateway,
// not queueing behind busy workers. The sub-benchmarks differ in how many
// events the woken sessions' logs already hold (whole completed turns, so
// at least that many).
func BenchmarkWakeLatency(b *testing.B) {
	for _, events := range []int{0, 10, 100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) { benchWake(b, events) })
	}
}

func benchWake(b *testing.B, events int) {
	ctx := b.Context()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "wake.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()

	url, arrivals := startModelProcess(b)

	agent, err := st.CreateAgent(ctx, &core.Agent{Name: "bench", Model: "anthropic/bench"})
	if err != nil {
		b.Fatal(err)
	}
	// A session's first wake in this runtime reads and derives its whole
	// log: it is measured on its own (cold-p50-ms), outside the figures,
	// which are of the wakes after it, on sessions the runtime holds.
	warmPerSession := wakesPerSession - 1
	generations := (b.N+warmPerSession*wakeSlots-1)/(warmPerSession*wakeSlots) + 1
	ids := seedSessions(b, st, agent, generations*wakeSlots, events)

	model := anthropic.New(anthropic.Config{
		APIKey:     "bench",
		BaseURL:    modelserver.AnthropicBaseURL(url),
		MaxRetries: 1,
		RetryDelay: time.Millisecond,
	})
	rt := runtime.New(runtime.Config{Store: st, Commits: st, Model: model, Workers: 8})
	if err := rt.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Stop(context.Background()) }()

	// wake n queues a marked message on the session of its slot once that
	// session has gone idle (its commit wakes it) and returns the
	// commit-to-arrival latency. Slot s serves wakes s, s+wakeSlots, …; every
	// wakesPerSession rounds it moves on to a fresh session.
	wake := func(n int) time.Duration {
		slot, round := n%wakeSlots, n/wakeSlots
		id := ids[(round/wakesPerSession)*wakeSlots+slot]
		marker := fmt.Sprintf("wake %d", n)
		waitIdle(b, st, id)
		body, _ := json.Marshal(core.MessageBody{Text: marker})
		if _, err := st.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserMessage, body)}}); err != nil {
			b.Fatal(err)
		}
		// The commit stream wakes the session, as in production.
		committed := time.Now()
		took := awaitArrival(b, arrivals, marker).Sub(committed)
		// The rest of the turn (the server reading a request as long as
		// the log, the answer's commits) ends before the next wake, so no
		// wake shares the machine with the one before it.
		waitIdle(b, st, id)
		return took
	}

	floor, err := diskfloor.NewGroup(filepath.Join(b.TempDir(), "floor"))
	if err != nil {
		b.Fatal(err)
	}
	defer floor.Close()
	client := &http.Client{}

	// The baselines run beside each measured wake, so a machine that gets
	// busier halfway slows both alike.
	lat := make([]time.Duration, 0, b.N)
	base := make([]time.Duration, 0, b.N)
	post := make([]time.Duration, 0, b.N)
	var cold []time.Duration
	b.ResetTimer()
	for n := 0; len(lat) < b.N; n++ {
		if (n/wakeSlots)%wakesPerSession == 0 {
			cold = append(cold, wake(n))
			continue
		}
		lat = append(lat, wake(n))
		base = append(base, fairWake(b, floor, client, url, arrivals, fmt.Sprintf("base %d", n)))
		post = append(post, barePost(b, client, url, arrivals, fmt.Sprintf("post %d", n)))
	}
	b.StopTimer()
	p50, p99 := latency.Percentiles(lat)
	b.ReportMetric(latency.Millis(p50), "p50-ms")
	b.ReportMetric(latency.Millis(p99), "p99-ms")
	p50, _ = latency.Percentiles(cold)
	b.ReportMetric(latency.Millis(p50), "cold-p50-ms")
	p50, p99 = latency.Percentiles(base)
	b.ReportMetric(latency.Millis(p50), "baseline-p50-ms")
	b.ReportMetric(latency.Millis(p99), "baseline-p99-ms")
	p50, p99 = latency.Percentiles(post)
	b.ReportMetric(latency.Millis(p50), "post-p50-ms")
	b.ReportMetric(latency.Millis(p99), "post-p99-ms")
}

// fairWake is the least a wake does: a goroutine, started as the runtime
// starts a worker's cycle, makes one durable commit (a 4 KiB record in a
// group-committed fdatasync) and then sends the model request. It returns
// the time from the start to the request's arrival.
func fairWake(b *testing.B, floor *diskfloor.Group, client *http.Client, url string, arrivals <-chan arrival, marker string) time.Duration {
	b.Helper()
	req := messagesRequest(b, url, marker)
	failed := make(chan error, 1)
	start := time.Now()
	go func() {
		if err := floor.Commit(); err != nil {
			failed <- err
			return
		}
		failed <- send(client, req)
	}()
	at := awaitArrival(b, arrivals, marker)
	if err := <-failed; err != nil {
		b.Fatal(err)
	}
	return at.Sub(start)
}

// seedSessions creates n idle sessions of agent whose logs already hold
// at least events events: completed turns, each shaped as the harness logs
// a one-step turn (input, running, turn.started, answer, turn.completed,
// idle). A session's history is one append, so seeding costs one commit
// per session and concurrent seeders share fsyncs.
func seedSessions(b *testing.B, st *bolt.Store, agent *core.Agent, n, events int) []string {
	b.Helper()
	ctx := b.Context()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version}}})
			if err != nil {
				errs[i] = err
				return
			}
			ids[i] = res.Session.ID
			if events == 0 {
				return
			}
			turns := (events + eventsPerTurn - 1) / eventsPerTurn
			evs := make([]core.Event, 0, eventsPerTurn*turns)
			for t := range turns {
				turn := core.NewID(core.PrefixTurn)
				body, _ := json.Marshal(core.MessageBody{Text: fmt.Sprintf("earlier message %d", t)})
				input := core.NewInput(core.TypeUserMessage, body)
				input.ProcessedAt = input.CreatedAt.Ptr()
				for _, e := range []core.Event{
					input,
					core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
					core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
					core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "ok"}),
					core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
					core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusIdle, StopReason: core.ReasonCompleted}),
				} {
					e.TurnID = turn
					evs = append(evs, e)
				}
			}
			_, errs[i] = st.Append(ctx, ids[i], core.AppendRequest{Holder: "seed", Events: evs})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// waitIdle polls until the session's last turn is over and its inputs
// taken; the store is the only observable.
func waitIdle(b *testing.B, st *bolt.Store, id string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := st.GetSession(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		if s.Status == core.StatusIdle && s.TurnID == "" {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("session %s still %s after 10s", id, s.Status)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// awaitArrival returns when the request carrying marker reached the server.
func awaitArrival(b *testing.B, arrivals <-chan arrival, marker string) time.Time {
	b.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case a := <-arrivals:
			if a.marker == marker {
				return a.at
			}
		case <-timeout.C:
			b.Fatalf("no model request for %q within 10s", marker)
		}
	}
}

// barePost sends the smallest Messages request the server accepts and
// returns the time from just before the send to its arrival, over a
// kept-alive connection as the SDK's would be.
func barePost(b *testing.B, client *http.Client, url string, arrivals <-chan arrival, marker string) time.Duration {
	b.Helper()
	req := messagesRequest(b, url, marker)
	sent := time.Now()
	if err := send(client, req); err != nil {
		b.Fatal(err)
	}
	return awaitArrival(b, arrivals, marker).Sub(sent)
}

// messagesRequest is the smallest Messages request the server accepts,
// its one user message marker.
func messagesRequest(b *testing.B, url, marker string) *http.Request {
	b.Helper()
	body, _ := json.Marshal(map[string]any{
		"model":      "bench",
		"max_tokens": 16,
		"messages":   []map[string]string{{"role": "user", "content": marker}},
	})
	req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, strings.TrimSuffix(url, "/")+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "bench")
	return req
}

// send sends req and drains the answer, so the connection is reused for
// the next send.
func send(client *http.Client, req *http.Request) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("baseline post: %s", resp.Status)
	}
	return nil
}
