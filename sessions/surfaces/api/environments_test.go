package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestUnknownEnvironmentIsRefused: a session or agent naming an
// environment that does not exist is a 400 naming it, and nothing is
// stored; an agent whose environment was deleted can still be updated
// otherwise.
func TestUnknownEnvironmentIsRefused(t *testing.T) {
	e := newAPI(t)
	if _, err := e.store.CreateEnvironment(t.Context(), &core.Environment{Name: "py"}); err != nil {
		t.Fatal(err)
	}
	agent := e.agent(t)
	withEnv := func(env string) map[string]any {
		return map[string]any{"name": "envy", "model": "anthropic/m", "system": "s", "environment": env}
	}
	tests := []struct {
		name, method, path string
		body               func(t *testing.T) any
		want               int
	}{
		{"a session without an environment", "POST", "/v1/sessions", func(*testing.T) any { return map[string]any{"agent": agent} }, 201},
		{"a session with one", "POST", "/v1/sessions", func(*testing.T) any { return map[string]any{"agent": agent, "environment": "py"} }, 201},
		{"a session with an unknown one", "POST", "/v1/sessions", func(*testing.T) any { return map[string]any{"agent": agent, "environment": "rb"} }, 400},
		{"an agent with one", "POST", "/v1/agents", func(*testing.T) any { return withEnv("py") }, 201},
		{"an agent with an unknown one", "POST", "/v1/agents", func(*testing.T) any { return withEnv("rb") }, 400},
		{"an agent updated to an unknown one", "POST", "/v1/agents/" + agent, func(*testing.T) any { return map[string]any{"environment": "rb"} }, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			beforePage, _ := e.store.ListSessions(t.Context(), core.SessionFilter{})
			before := beforePage.Sessions
			code, raw := e.call(t, admin, tt.method, tt.path, tt.body(t))
			if code != tt.want {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, code, raw, tt.want)
			}
			if tt.want != 400 {
				if tt.path == "/v1/agents" {
					// The next case creates the same name.
					if a, err := e.store.GetAgent(t.Context(), "envy"); err == nil {
						_, _ = e.store.UpdateAgent(t.Context(), a.ID, 0, func(a *core.Agent) error { a.Name = "envy-" + a.ID; return nil })
					}
				}
				return
			}
			var body struct {
				Error struct{ Type, Message string }
			}
			if json.Unmarshal(raw, &body) != nil || body.Error.Type != "invalid_request" || !strings.Contains(body.Error.Message, `"rb"`) {
				t.Fatalf("error %s", raw)
			}
			afterPage, _ := e.store.ListSessions(t.Context(), core.SessionFilter{})
			after := afterPage.Sessions
			if len(after) != len(before) {
				t.Fatal("a session was stored after a refusal")
			}
			if a, err := e.store.GetAgent(t.Context(), agent); err != nil || a.Environment == "rb" || a.Version != 1 {
				t.Fatalf("agent after a refusal: %+v, %v", a, err)
			}
			if _, err := e.store.GetAgent(t.Context(), "envy"); err == nil && tt.path == "/v1/agents" {
				t.Fatal("an agent was stored after a refusal")
			}
		})
	}

	// The agent's environment is deleted; an update of something else
	// still goes through.
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "kept", "model": "anthropic/m", "system": "s", "environment": "py"})
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	var kept struct{ ID string }
	_ = json.Unmarshal(raw, &kept)
	if err := e.store.DeleteEnvironment(t.Context(), "py"); err != nil {
		t.Fatal(err)
	}
	if code, raw := e.call(t, admin, "POST", "/v1/agents/"+kept.ID, map[string]any{"model": "openai/m"}); code != 200 {
		t.Fatalf("update of an agent whose environment is gone: %d %s", code, raw)
	}
	if code, raw := e.call(t, admin, "POST", "/v1/agents/"+kept.ID, map[string]any{"model": "openai/n", "environment": "py"}); code != 200 {
		t.Fatalf("update naming the environment it already has: %d %s", code, raw)
	}
}
