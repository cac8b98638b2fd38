package bolt

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestEnsureDefaultAgent: each start brings the default agent to the
// configured model, and leaves what an operator changed.
func TestEnsureDefaultAgent(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name        string
		models      []string // one start each
		wantVersion int      // 0: no default agent
		wantModel   string
	}{
		{"no model, no agent", []string{""}, 0, ""},
		{"created at the first start", []string{"anthropic/a"}, 1, "anthropic/a"},
		{"the same model again", []string{"anthropic/a", "anthropic/a"}, 1, "anthropic/a"},
		{"a new model is a new version", []string{"anthropic/a", "openai/b"}, 2, "openai/b"},
		{"no model later leaves it", []string{"anthropic/a", ""}, 1, "anthropic/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := openTemp(t, Options{})
			for _, m := range tt.models {
				if err := EnsureDefaultAgent(ctx, s, m, DefaultSystem, log); err != nil {
					t.Fatal(err)
				}
			}
			a, err := s.GetAgent(ctx, "default")
			if tt.wantVersion == 0 {
				if !errors.Is(err, core.ErrNotFound) {
					t.Fatalf("default agent: %+v, %v", a, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Version != tt.wantVersion || a.Model != tt.wantModel || a.System != DefaultSystem {
				t.Fatalf("default agent: version %d, model %q, system %q", a.Version, a.Model, a.System)
			}
		})
	}
}

func TestEnsureDefaultAgentKeepsTheOperatorsSystem(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	log := slog.New(slog.DiscardHandler)
	if err := EnsureDefaultAgent(ctx, s, "anthropic/a", DefaultSystem, log); err != nil {
		t.Fatal(err)
	}
	a, err := s.GetAgent(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateAgent(ctx, a.ID, a.Version, func(a *core.Agent) error { a.System = "mine"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDefaultAgent(ctx, s, "openai/b", DefaultSystem, log); err != nil {
		t.Fatal(err)
	}
	if a, err = s.GetAgent(ctx, "default"); err != nil || a.System != "mine" || a.Model != "openai/b" || a.Version != 3 {
		t.Fatalf("default agent: %+v, %v", a, err)
	}
}

// TestEnsureDefaultAgentRace: replicas starting together on one store all
// start, with one default agent at one version.
func TestEnsureDefaultAgentRace(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	log := slog.New(slog.DiscardHandler)
	for _, model := range []string{"anthropic/a", "openai/b"} {
		// Each replica reads before any writes: every one but the first
		// to write finds its write in conflict.
		racing := &readsTogether{AgentStore: s, n: 4}
		racing.wg.Add(racing.n)
		errs := make(chan error, racing.n)
		for range racing.n {
			go func() { errs <- EnsureDefaultAgent(ctx, racing, model, DefaultSystem, log) }()
		}
		for range racing.n {
			if err := <-errs; err != nil {
				t.Fatalf("model %s: a replica did not start: %v", model, err)
			}
		}
		a, err := s.GetAgent(ctx, "default")
		if err != nil || a.Model != model {
			t.Fatalf("default agent = %+v, %v; want model %s", a, err, model)
		}
		if want := map[string]int{"anthropic/a": 1, "openai/b": 2}[model]; a.Version != want {
			t.Fatalf("default agent at version %d, want %d", a.Version, want)
		}
	}
}

// readsTogether holds each caller's first read of the default agent until
// n callers have read it, as replicas starting at one moment do.
type readsTogether struct {
	core.AgentStore
	n  int
	wg sync.WaitGroup
	mu sync.Mutex
	k  int
}

func (r *readsTogether) GetAgent(ctx context.Context, ref string) (*core.Agent, error) {
	a, err := r.AgentStore.GetAgent(ctx, ref)
	r.mu.Lock()
	first := r.k < r.n
	r.k++
	r.mu.Unlock()
	if first {
		r.wg.Done()
		r.wg.Wait()
	}
	return a, err
}
