package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// TestAgentRuntime: an agent's runtime is checked on create and update,
// versioned like every field, and kept when an update leaves it out; the
// built-in loop is the absent one.
func TestAgentRuntime(t *testing.T) {
	e := newAPI(t)
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "plain", "model": "anthropic/x"})
	if code != 201 || strings.Contains(string(raw), `"runtime"`) {
		t.Fatalf("an agent without a runtime (the built-in loop) shows none: %d %s", code, raw)
	}
	runtime := map[string]any{"kind": "acp", "command": []string{"claude-agent-acp"}, "env": map[string]string{"DEBUG": "1"}, "permissions": map[string]string{"edit": "always_allow"}}
	code, raw = e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "coder", "runtime": runtime})
	if code != 201 || !strings.Contains(string(raw), `"runtime":{"kind":"acp","command":["claude-agent-acp"],"env":{"DEBUG":"1"},"permissions":{"edit":"always_allow"}}`) {
		t.Fatalf("an acp agent needs no model: %d %s", code, raw)
	}
	for _, tc := range []struct {
		name    string
		runtime any
		want    string
	}{
		{"unknown kind", map[string]any{"kind": "claude"}, `"runtime.kind": "claude"`},
		{"acp without command", map[string]any{"kind": "acp"}, `"runtime.command" is required`},
		{"unknown field", map[string]any{"kind": "acp", "command": []string{"x"}, "secret": "k"}, `unknown field "secret"`},
		{"unknown tool kind", map[string]any{"kind": "acp", "command": []string{"x"}, "permissions": map[string]string{"fly": "deny"}}, `"fly" is not an ACP tool kind`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "bad", "model": "anthropic/x", "runtime": tc.runtime})
			wantError(t, code, raw, 400, "invalid_request", tc.want)
			code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"runtime": tc.runtime})
			wantError(t, code, raw, 400, "invalid_request", tc.want)
		})
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"system": "v2"})
	if code != 200 || !strings.Contains(string(raw), `"version":2`) || !strings.Contains(string(raw), `"command":["claude-agent-acp"]`) {
		t.Fatalf("an update that leaves the runtime alone: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"runtime": map[string]any{"kind": "builtin"}})
	wantError(t, code, raw, 400, "invalid_request", `"model"`)
	code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"model": "anthropic/x", "runtime": map[string]any{"kind": "builtin"}})
	if code != 200 || !strings.Contains(string(raw), `"version":3`) || !strings.Contains(string(raw), `"runtime":{"kind":"builtin"}`) {
		t.Fatalf("back to the built-in loop: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "GET", "/v1/agents/coder?version=2", nil)
	if code != 200 || !strings.Contains(string(raw), `"kind":"acp"`) {
		t.Fatalf("version 2 keeps its runtime: %d %s", code, raw)
	}
}

// TestAgentRuntimeUnavailable: a gateway that cannot run a runtime
// refuses an agent naming it, saying why.
func TestAgentRuntimeUnavailable(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mux := http.NewServeMux()
	(&api.Handler{Store: db, Runtime: &fakeRuntime{}, Runtimes: func(r core.AgentRuntime) error {
		if r.Command[0] == "goose" {
			return fmt.Errorf("field \"runtime\": kind %s needs the Docker sandbox (SWITCHBOARD_SANDBOX is none): %w", r.Kind, core.ErrInvalid)
		}
		return nil
	}, Secrets: func(_ context.Context, field string, values map[string]string) error {
		for k, v := range values {
			if v == "sk-real" {
				return fmt.Errorf("field %q: %s is the secret of vault credential vcr_x: %w", field, k, core.ErrInvalid)
			}
		}
		return nil
	}}).Register(mux)
	srv := httptest.NewServer((&api.Auth{AdminToken: admin, Sessions: db}).Wrap(mux))
	t.Cleanup(srv.Close)
	e := &apiEnv{store: db, srv: srv}
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "coder", "runtime": map[string]any{"kind": "acp", "command": []string{"goose", "acp"}}})
	wantError(t, code, raw, 400, "invalid_request", "needs the Docker sandbox")
	code, raw = e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "plain", "model": "anthropic/x"})
	if code != 201 {
		t.Fatalf("the built-in loop: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/plain", map[string]any{"runtime": map[string]any{"kind": "acp", "command": []string{"goose", "acp"}}})
	wantError(t, code, raw, 400, "invalid_request", "needs the Docker sandbox")
	// A vault secret in runtime.env is refused, on create and update.
	leaky := map[string]any{"kind": "acp", "command": []string{"codex-acp"}, "env": map[string]string{"OPENAI_API_KEY": "sk-real"}}
	code, raw = e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "leaky", "runtime": leaky})
	wantError(t, code, raw, 400, "invalid_request", "OPENAI_API_KEY is the secret of vault credential")
	code, raw = e.call(t, admin, "POST", "/v1/agents/plain", map[string]any{"runtime": leaky})
	wantError(t, code, raw, 400, "invalid_request", "OPENAI_API_KEY is the secret of vault credential")
}

// TestConfirmationForGood: a user.tool_confirmation may say it answers
// for good (always, a boolean), which the log keeps.
func TestConfirmationForGood(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	ctx := context.Background()
	if _, err := e.store.Append(ctx, s.ID, core.AppendRequest{TurnID: "turn_1", Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonRequiresAction, PendingAction: &core.PendingAction{ToolUseIDs: []string{"tu_1"}}}),
	}}); err != nil {
		t.Fatal(err)
	}
	code, raw := e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"events": []map[string]any{
		{"type": "user.tool_confirmation", "tool_use_id": "tu_1", "result": "allow", "always": "yes"}}})
	wantError(t, code, raw, 400, "invalid_request", "always")
	code, raw = e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"events": []map[string]any{
		{"type": "user.tool_confirmation", "tool_use_id": "tu_1", "result": "allow", "always": true}}})
	if code != 202 {
		t.Fatalf("a confirmation for good: %d %s", code, raw)
	}
	pending, err := e.store.Pending(ctx, s.ID)
	if err != nil || len(pending) != 1 || !strings.Contains(string(pending[0].Body), `"always":true`) {
		t.Fatalf("pending %v (%v)", pending, err)
	}
}
