package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestSessionTenant: an admin creates a session with a tenant (or gets
// the default one), the view shows it, and bad tenants store nothing.
func TestSessionTenant(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	tests := []struct {
		name   string
		tenant any // omitted when nil
		want   string
	}{
		{"none", nil, core.DefaultTenant},
		{"given", "customer:acme", "customer:acme"},
		{"unicode", "client: Zürich 東京", "client: Zürich 東京"},
		{"128 characters", strings.Repeat("é", 128), strings.Repeat("é", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"agent": agent}
			if tt.tenant != nil {
				body["tenant"] = tt.tenant
			}
			code, raw := e.call(t, admin, "POST", "/v1/sessions", body)
			var c struct{ ID, Tenant string }
			if err := json.Unmarshal(raw, &c); err != nil || code != 201 || c.Tenant != tt.want {
				t.Fatalf("create: %d %s", code, raw)
			}
			code, raw = e.call(t, admin, "GET", "/v1/sessions/"+c.ID, nil)
			var v struct{ Tenant string }
			if err := json.Unmarshal(raw, &v); err != nil || code != 200 || v.Tenant != tt.want {
				t.Fatalf("view: %d %s", code, raw)
			}
			s, err := e.store.GetSession(t.Context(), c.ID)
			if err != nil || s.Tenant != tt.want {
				t.Fatalf("stored %+v, %v", s, err)
			}
		})
	}

	own := e.session(t, agent, "")
	refused := []struct {
		name, token string
		tenant      any
		status      int
		typ, want   string
	}{
		{"empty", admin, "", 0, "", ""}, // "" is the default, not a refusal; checked below
		{"too long", admin, strings.Repeat("x", 129), 400, "invalid_request", `field "tenant": want 1 to 128 characters`},
		{"a control character", admin, "acme\n", 400, "invalid_request", `field "tenant"`},
		{"a NUL", admin, "ac\x00me", 400, "invalid_request", "non-printable"},
		{"the shared partition", admin, "*", 400, "invalid_request", "shared memory stores"},
		{"not a string", admin, 7, 400, "invalid_request", "tenant"},
		{"a session's client token", own.ClientToken, "customer:acme", 401, "unauthorized", "admin"},
		{"no token", "", "customer:acme", 401, "unauthorized", ""},
	}
	before := countSessions(t, e)
	for _, tt := range refused[1:] {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			code, raw := e.call(t, tt.token, "POST", "/v1/sessions", map[string]any{"agent": agent, "tenant": tt.tenant})
			wantError(t, code, raw, tt.status, tt.typ, tt.want)
		})
	}
	if after := countSessions(t, e); after != before {
		t.Fatalf("refused creates stored %d sessions", after-before)
	}
	code, raw := e.call(t, admin, "POST", "/v1/sessions", map[string]any{"agent": agent, "tenant": ""})
	if code != 201 || !strings.Contains(string(raw), `"tenant":"api"`) {
		t.Fatalf("empty tenant: %d %s", code, raw)
	}
}

func countSessions(t *testing.T, e *apiEnv) int {
	t.Helper()
	_, raw := e.call(t, admin, "GET", "/v1/sessions", nil)
	return strings.Count(string(raw), `"id":"ses_`)
}
