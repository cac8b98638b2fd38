package api_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestSessionLimits: a session is created with its own limits, an admin
// merges more into them, and a raise of a paused budget queues its turn
// again; bad limits are refused naming the field, a session's own token
// may not raise its budget.
func TestSessionLimits(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	code, raw := e.call(t, admin, "POST", "/v1/sessions", map[string]any{"agent": agent, "limits": map[string]any{"max_session_tokens": 1000}})
	if code != 201 {
		t.Fatalf("create with limits: %d %s", code, raw)
	}
	var c created
	_ = json.Unmarshal(raw, &c)
	var view struct {
		Status string       `json:"status"`
		Limits *core.Limits `json:"limits"`
	}
	code, raw = e.call(t, admin, "GET", "/v1/sessions/"+c.ID, nil)
	if _ = json.Unmarshal(raw, &view); code != 200 || view.Limits == nil || view.Limits.MaxSessionTokens != 1000 {
		t.Fatalf("created session %d %s", code, raw)
	}

	for _, tt := range []struct {
		name, token, body string
		status            int
		typ, contains     string
	}{
		{"negative", admin, `{"limits":{"max_session_cost_usd":-1}}`, 400, "invalid_request", "max_session_cost_usd"},
		{"none", admin, `{"limits":{}}`, 400, "invalid_request", `"limits" is required`},
		{"unknown field", admin, `{"limits":{"max_session_dollars":5}}`, 400, "invalid_request", "max_session_dollars"},
		{"other field", admin, `{"metadata":{"a":"b"}}`, 400, "invalid_request", "metadata"},
		{"client token", c.ClientToken, `{"limits":{"max_session_tokens":5000}}`, 401, "unauthorized", "admin token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := e.call(t, tt.token, "POST", "/v1/sessions/"+c.ID, tt.body)
			wantError(t, code, raw, tt.status, tt.typ, tt.contains)
		})
	}
	code, raw = e.call(t, admin, "POST", "/v1/sessions", map[string]any{"agent": agent, "limits": map[string]any{"max_tokens": -5}})
	wantError(t, code, raw, 400, "invalid_request", "max_tokens")

	// Paused by its budget, then raised: queued to resume.
	if _, err := e.store.Append(t.Context(), c.ID, core.AppendRequest{TurnID: "turn_1", Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{Budget: &core.BudgetPause{Name: core.BudgetTokens, Limit: 1000, Spent: 1200}}}),
	}}); err != nil {
		t.Fatal(err)
	}
	code, raw = e.call(t, admin, "POST", "/v1/sessions/"+c.ID, `{"limits":{"max_session_cost_usd":2}}`)
	if _ = json.Unmarshal(raw, &view); code != 200 || view.Status != "queued" || view.Limits == nil ||
		*view.Limits != (core.Limits{MaxSessionTokens: 1000, MaxSessionCostUSD: 2}) {
		t.Fatalf("raise: %d %s", code, raw)
	}
}
