package api_test

import (
	"strings"
	"testing"
)

// TestAgentRepositoryAccess: an agent's repository_access is checked on
// create and update (shape, then the installation), kept across
// versions when not given, and taken away by null.
func TestAgentRepositoryAccess(t *testing.T) {
	e := newAPI(t)
	access := map[string]any{"installation": "ins_acme", "repositories": []string{"acme/app", "acme/web"}}
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "coder", "model": "anthropic/x", "repository_access": access})
	if code != 201 || !strings.Contains(string(raw), `"repository_access":{"installation":"ins_acme","repositories":["acme/app","acme/web"]}`) {
		t.Fatalf("create: %d %s", code, raw)
	}
	for _, tc := range []struct {
		name   string
		access any
		want   string
	}{
		{"not an installation id", map[string]any{"installation": "acme", "repositories": []string{"acme/app"}}, "repository_access.installation"},
		{"an unknown installation", map[string]any{"installation": "ins_other", "repositories": []string{"acme/app"}}, `no installation "ins_other"`},
		{"no repositories", map[string]any{"installation": "ins_acme", "repositories": []string{}}, "repository_access.repositories: want 1 to 20"},
		{"a name without an owner", map[string]any{"installation": "ins_acme", "repositories": []string{"app"}}, `repositories[0] "app": want owner/name`},
		{"a repository twice", map[string]any{"installation": "ins_acme", "repositories": []string{"acme/app", "ACME/app"}}, "listed twice"},
		{"another account's repository", map[string]any{"installation": "ins_acme", "repositories": []string{"evil/app"}}, "evil/app is not a repository of acme"},
		{"an unknown field", map[string]any{"installation": "ins_acme", "repositories": []string{"acme/app"}, "branch": "main"}, `unknown field "branch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "bad", "model": "anthropic/x", "repository_access": tc.access})
			wantError(t, code, raw, 400, "invalid_request", tc.want)
			code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"repository_access": tc.access})
			wantError(t, code, raw, 400, "invalid_request", tc.want)
		})
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"system": "v2"})
	if code != 200 || !strings.Contains(string(raw), `"version":2`) || !strings.Contains(string(raw), `"repositories":["acme/app","acme/web"]`) {
		t.Fatalf("an update that leaves the access alone: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/coder", map[string]any{"repository_access": nil})
	if code != 200 || strings.Contains(string(raw), "repository_access") {
		t.Fatalf("null takes the access away: %d %s", code, raw)
	}
}
