package environments

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions"
)

func openStore(t *testing.T) *sessions.Store {
	t.Helper()
	store, err := sessions.Open(filepath.Join(t.TempDir(), "db"), sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.CreateEnvironment(t.Context(), &core.Environment{Name: "py"}); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestChecked: a session or agent naming an environment that does not
// exist is refused as invalid, and nothing is stored.
func TestChecked(t *testing.T) {
	tests := []struct {
		name    string
		call    func(st core.Store, envs core.EnvironmentStore) error
		wantErr error
	}{
		{"a session without an environment", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.CreateSession(t.Context(), core.NewSession{})
			return err
		}, nil},
		{"a session with one", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.CreateSession(t.Context(), core.NewSession{Session: core.Session{Environment: "py"}})
			return err
		}, nil},
		{"a session with an unknown one", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.CreateSession(t.Context(), core.NewSession{Session: core.Session{Environment: "rb"}})
			return err
		}, core.ErrInvalid},
		{"a session and destinations with an unknown one", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.(core.SessionDestinationCreator).CreateSessionAndDestinations(t.Context(), core.NewSession{Session: core.Session{Environment: "rb"}}, nil)
			return err
		}, core.ErrInvalid},
		{"an agent with one", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.CreateAgent(t.Context(), &core.Agent{Name: "a", Model: "anthropic/m", Environment: "py"})
			return err
		}, nil},
		{"an agent with an unknown one", func(st core.Store, envs core.EnvironmentStore) error {
			_, err := st.CreateAgent(t.Context(), &core.Agent{Name: "a", Model: "anthropic/m", Environment: "rb"})
			return err
		}, core.ErrInvalid},
		{"an agent updated to an unknown one", func(st core.Store, envs core.EnvironmentStore) error {
			a, err := st.CreateAgent(t.Context(), &core.Agent{Name: "a", Model: "anthropic/m"})
			if err != nil {
				return err
			}
			_, err = st.UpdateAgent(t.Context(), a.ID, a.Version, func(a *core.Agent) error { a.Environment = "rb"; return nil })
			return err
		}, core.ErrInvalid},
		{"an agent whose environment was deleted, updated otherwise", func(st core.Store, envs core.EnvironmentStore) error {
			a, err := st.CreateAgent(t.Context(), &core.Agent{Name: "a", Model: "anthropic/m", Environment: "py"})
			if err != nil {
				return err
			}
			if err := envs.DeleteEnvironment(t.Context(), "py"); err != nil {
				return err
			}
			_, err = st.UpdateAgent(t.Context(), a.ID, a.Version, func(a *core.Agent) error { a.Model = "openai/m"; return nil })
			return err
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := openStore(t)
			st := Checked(creatorStore{store}, store)
			if _, ok := st.(core.SessionDestinationCreator); !ok {
				t.Fatal("the check hides the store's create-with-destinations")
			}
			err := tt.call(st, store)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil {
				return
			}
			if list, _, err := store.ListSessions(t.Context(), core.SessionFilter{}); err != nil || len(list) != 0 {
				t.Fatalf("sessions stored after a refusal: %v, %v", list, err)
			}
			if a, err := store.GetAgent(t.Context(), "a"); err == nil && a.Environment == "rb" {
				t.Fatalf("agent stored after a refusal: %+v", a)
			}
		})
	}
}

// TestCheckedWithoutDestinations: a store that cannot create sessions
// with destinations gives a check that cannot either.
func TestCheckedWithoutDestinations(t *testing.T) {
	store := openStore(t)
	if _, ok := Checked(plainStore{store}, store).(core.SessionDestinationCreator); ok {
		t.Fatal("the check offers what the store does not have")
	}
}

// plainStore is a store without create-with-destinations.
type plainStore struct{ core.Store }

// creatorStore has it, as the webhooks' wrapper of the store gives it to
// the API.
type creatorStore struct{ *sessions.Store }

func (creatorStore) PrepareDestinations(context.Context, string, []core.DestinationSpec) ([]core.NewDestination, []core.CreatedDestination, error) {
	return nil, nil, nil
}
