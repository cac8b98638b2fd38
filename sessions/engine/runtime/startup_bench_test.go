package runtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	stdruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// startupSessions is the default size of the start-up benchmark's store;
// BENCH_SESSIONS overrides it for quick runs.
const startupSessions = 100_000

// buildWriters is how many goroutines create sessions at once, so their
// commits share fsyncs through the store's group committer.
const buildWriters = 64

// createIdle creates n sessions of agent with no input, idle from birth,
// from buildWriters goroutines.
func createIdle(ctx context.Context, st *bolt.Store, agent *core.Agent, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, buildWriters)
	for w := range buildWriters {
		wg.Go(func() {
			// Writer w creates sessions w, w+buildWriters, … so the counts
			// add up to n whatever its remainder.
			for i := w; i < n; i += buildWriters {
				if _, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version}}}); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// startWatch wraps the store to report the scheduler's first look at the
// wake queue, which is when the runtime is started in practice: Start
// itself returns as soon as its goroutines are launched.
type startWatch struct {
	*bolt.Store
	once    sync.Once
	started chan struct{}
}

func (s *startWatch) DueWakes(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ids, err := s.Store.DueWakes(ctx, now, limit)
	s.once.Do(func() { close(s.started) })
	return ids, err
}

// BenchmarkStartup100k reopens a store of idle sessions and starts a
// runtime on it, reporting the worst over the iterations of: start-up time
// (Open through the scheduler's first pass), goroutines the runtime added,
// live heap after a GC and process RSS. With idle sessions holding nothing,
// none of these should grow with the session count.
func BenchmarkStartup100k(b *testing.B) {
	n := startupSessions
	if v := os.Getenv("BENCH_SESSIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			b.Fatalf("BENCH_SESSIONS=%q: want a session count", v)
		}
	}
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "startup.db")
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// The deferred close is for a failed iteration; a completed run leaves
	// st holding the last iteration's store.
	defer func() { st.Close() }()
	agent, err := st.CreateAgent(ctx, &core.Agent{Name: "startup", Model: "anthropic/bench"})
	if err != nil {
		b.Fatal(err)
	}
	built := time.Now()
	if err := createIdle(ctx, st, agent, n); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		b.Logf("built %d idle sessions in %s (%d MB on disk)", n, time.Since(built).Round(time.Millisecond), fi.Size()>>20)
	}
	counts, err := st.CountByStatus(ctx)
	if err != nil || counts[core.StatusIdle] != n {
		b.Fatalf("store holds %v (%v), want %d idle", counts, err, n)
	}
	// Garbage from the build would otherwise show in the first iteration's
	// RSS.
	debug.FreeOSMemory()

	var worst struct {
		startup             time.Duration
		goroutines          int
		heapBytes, rssBytes uint64
	}
	for b.Loop() {
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		before := stdruntime.NumGoroutine()
		t0 := time.Now()
		if st, err = bolt.Open(path, bolt.Options{}); err != nil {
			b.Fatal(err)
		}
		watch := &startWatch{Store: st, started: make(chan struct{})}
		// No session is due, so the model must never be called; an empty
		// script makes a call fail loudly in the log rather than pass.
		rt := runtime.New(runtime.Config{Store: watch, Model: fakemodel.New(), Workers: 8})
		if err := rt.Start(ctx); err != nil {
			b.Fatal(err)
		}
		select {
		case <-watch.started:
		case <-time.After(time.Minute):
			b.Fatal("scheduler never read the wake queue")
		}
		startup := time.Since(t0)
		goroutines := stdruntime.NumGoroutine() - before
		stdruntime.GC()
		var mem stdruntime.MemStats
		stdruntime.ReadMemStats(&mem)
		// Returning freed pages first makes RSS what the process holds now,
		// not what an earlier GC cycle left mapped.
		debug.FreeOSMemory()
		rss, err := vmRSS()
		if err != nil {
			b.Fatal(err)
		}
		running := rt.Running()
		if err := rt.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		if running != 0 {
			b.Fatalf("runtime is running %d sessions of an all-idle store", running)
		}
		b.Logf("startup %s, +%d goroutines, heap %.1f MB, rss %.1f MB",
			startup.Round(time.Microsecond), goroutines, mb(mem.HeapInuse), mb(rss))
		worst.startup = max(worst.startup, startup)
		worst.goroutines = max(worst.goroutines, goroutines)
		worst.heapBytes = max(worst.heapBytes, mem.HeapInuse)
		worst.rssBytes = max(worst.rssBytes, rss)
	}
	b.ReportMetric(float64(worst.startup)/float64(time.Millisecond), "startup-ms")
	b.ReportMetric(float64(worst.goroutines), "goroutines")
	b.ReportMetric(mb(worst.heapBytes), "heap-MB")
	b.ReportMetric(mb(worst.rssBytes), "rss-MB")
}

func mb(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// vmRSS reads the process's resident set size from /proc/self/status.
func vmRSS() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		// "VmRSS:	   12345 kB"
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS %q: %w", rest, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}

// touchStore records every session the runtime reads or writes by id.
type touchStore struct {
	*bolt.Store
	mu      sync.Mutex
	touched map[string]bool
}

func (s *touchStore) touch(id string) {
	s.mu.Lock()
	s.touched[id] = true
	s.mu.Unlock()
}

func (s *touchStore) seen() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.touched))
	for id := range s.touched {
		out[id] = true
	}
	return out
}

func (s *touchStore) GetSession(ctx context.Context, id string) (*core.Session, error) {
	s.touch(id)
	return s.Store.GetSession(ctx, id)
}

func (s *touchStore) Pending(ctx context.Context, id string) ([]core.Event, error) {
	s.touch(id)
	return s.Store.Pending(ctx, id)
}

func (s *touchStore) Append(ctx context.Context, id string, req core.AppendRequest) ([]core.Event, error) {
	s.touch(id)
	return s.Store.Append(ctx, id, req)
}

func (s *touchStore) Events(ctx context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	s.touch(id)
	return s.Store.Events(ctx, id, after, limit)
}

func (s *touchStore) ScheduleWake(ctx context.Context, id string, at time.Time) error {
	s.touch(id)
	return s.Store.ScheduleWake(ctx, id, at)
}

func (s *touchStore) ClearWake(ctx context.Context, id string, epoch uint64) error {
	s.touch(id)
	return s.Store.ClearWake(ctx, id, epoch)
}

func (s *touchStore) ClearWakeUnlessQueued(ctx context.Context, id string, epoch uint64) (bool, error) {
	s.touch(id)
	return s.Store.ClearWakeUnlessQueued(ctx, id, epoch)
}

// TestStartupDoesNotScanSessions is the start-up benchmark's shape at a
// size a test run affords: among 2,000 idle sessions, three need a visit
// (two turns a dead process left open, one queued input), and Start must
// resume exactly those, touching no idle session, and hold nothing once
// they are done.
func TestStartupDoesNotScanSessions(t *testing.T) {
	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	agent, err := st.CreateAgent(ctx, &core.Agent{Name: "a", Model: "anthropic/test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := createIdle(ctx, st, agent, 2000); err != nil {
		t.Fatal(err)
	}

	input := func(text string) core.Event {
		body, _ := json.Marshal(core.MessageBody{Text: text})
		return core.NewInput(core.TypeUserMessage, body)
	}
	ref := core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version}}
	want := map[string]bool{}
	for i := range 2 {
		// A turn a dead process started: its input taken, its lease held,
		// its wake spent, so only OpenTurns leads Start to it.
		res, err := st.CreateSession(ctx, core.NewSession{Session: ref, Inputs: []core.Event{input(fmt.Sprintf("open %d", i))}})
		if err != nil {
			t.Fatal(err)
		}
		id := res.Session.ID
		if _, err := st.Append(ctx, id, core.AppendRequest{TakeInputs: true, TurnID: core.NewID(core.PrefixTurn), Holder: "run_dead", Events: []core.Event{
			core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
			core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		}}); err != nil {
			t.Fatal(err)
		}
		if err := st.ClearWake(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	// An input queued while no runtime ran: its wake is in the queue.
	res, err := st.CreateSession(ctx, core.NewSession{Session: ref, Inputs: []core.Event{input("queued")}})
	if err != nil {
		t.Fatal(err)
	}
	want[res.Session.ID] = true
	if open, err := st.OpenTurns(ctx); err != nil || len(open) != 2 {
		t.Fatalf("open turns before start: %v %v", open, err)
	}

	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "resumed"}
	watch := &touchStore{Store: st, touched: map[string]bool{}}
	before := stdruntime.NumGoroutine()
	rt := runtime.New(runtime.Config{Store: watch, Model: model, Workers: 8})
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })

	deadline := time.Now().Add(30 * time.Second)
	for id := range want {
		for {
			s, err := st.GetSession(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status == core.StatusIdle && s.TurnID == "" {
				if s.StopReason != core.ReasonCompleted {
					t.Fatalf("session %s stopped %s", id, s.StopReason)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %s still %s", id, s.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// The store says idle once turn.completed commits; the worker lets go
	// of the session just after.
	for rt.Running() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := rt.Running(); n != 0 {
		t.Fatalf("runtime still holds %d sessions", n)
	}
	if n := len(model.Requests()); n != len(want) {
		t.Fatalf("%d model calls, want one per resumed session (%d)", n, len(want))
	}
	seen := watch.seen()
	for id := range seen {
		if !want[id] {
			t.Errorf("runtime touched idle session %s", id)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("runtime never visited %s", id)
		}
	}
	if open, err := st.OpenTurns(ctx); err != nil || len(open) != 0 {
		t.Fatalf("open turns after resume: %v %v", open, err)
	}
	if _, ok, err := st.NextWake(ctx); err != nil || ok {
		t.Fatalf("a wake is still scheduled (%v)", err)
	}
	// The workers, the scheduler and the key sweeper, with slack for a
	// commit goroutine: a constant, where one per session would be
	// thousands. Goroutines that are done may take a moment to exit.
	for stdruntime.NumGoroutine()-before > 8+2+2 {
		if time.Now().After(deadline) {
			t.Fatalf("runtime added %d goroutines for 8 workers", stdruntime.NumGoroutine()-before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
