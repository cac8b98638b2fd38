package environments

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// openStore is a bbolt store with the environment "py".
func openStore(t *testing.T) *bolt.Store {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.CreateEnvironment(t.Context(), &core.Environment{Name: "py"}); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestSessions: a session's sandbox is made of the session's environment,
// else the one of the agent version it runs, else none.
func TestSessions(t *testing.T) {
	ctx := t.Context()
	store := openStore(t)
	if _, err := store.CreateEnvironment(ctx, &core.Environment{Name: "go"}); err != nil {
		t.Fatal(err)
	}
	withPy, err := store.CreateAgent(ctx, &core.Agent{Name: "py-agent", Model: "anthropic/m", Environment: "py"})
	if err != nil {
		t.Fatal(err)
	}
	// The session runs version 1; a later version's environment is not its.
	if _, err := store.UpdateAgent(ctx, withPy.ID, withPy.Version, func(a *core.Agent) error { a.Environment = "go"; return nil }); err != nil {
		t.Fatal(err)
	}
	plain, err := store.CreateAgent(ctx, &core.Agent{Name: "plain", Model: "anthropic/m"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		session core.Session
		want    string // "" for none
		wantErr string
	}{
		{"the session's own", core.Session{Agent: core.AgentRef{ID: withPy.ID, Version: 1}, Environment: "go"}, "go", ""},
		{"its agent version's", core.Session{Agent: core.AgentRef{ID: withPy.ID, Version: 1}}, "py", ""},
		{"none", core.Session{Agent: core.AgentRef{ID: plain.ID, Version: 1}}, "", ""},
		{"one that is gone", core.Session{Agent: core.AgentRef{ID: plain.ID, Version: 1}, Environment: "rb"}, "", `environment "rb", named by the session or its agent`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := store.CreateSession(ctx, core.NewSession{Session: tt.session})
			if err != nil {
				t.Fatal(err)
			}
			env, err := Sessions{Store: store}.SessionEnvironment(ctx, res.Session.ID)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q in it", err, tt.wantErr)
				}
				return
			}
			got := ""
			if env != nil {
				got = env.Name
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
