package installations_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/installations"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// revoker is a hand-written providers.Revoker.
type revoker struct {
	revoked []string
	err     error
}

func (r *revoker) Name() string { return "slack" }

func (r *revoker) Revoke(_ context.Context, in *core.Installation) error {
	r.revoked = append(r.revoked, in.ID)
	return r.err
}

var _ providers.Revoker = (*revoker)(nil)

func setup(t *testing.T) (*bolt.Store, *revoker, func(method, path, body string, admin bool) (int, string)) {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rv := &revoker{}
	mux := http.NewServeMux()
	(&installations.Handler{Store: store, Agents: store, Revokers: map[string]providers.Revoker{"slack": rv}}).Register(mux)
	do := func(method, path, body string, admin bool) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req = req.WithContext(core.WithPrincipal(req.Context(), core.Principal{Admin: admin, SessionID: "ses_x"}))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	return store, rv, do
}

func TestInstallationsAPI(t *testing.T) {
	store, rv, do := setup(t)
	ctx := t.Context()
	agent, err := store.CreateAgent(ctx, &core.Agent{Name: "helper", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := store.SaveInstallation(ctx, &core.Installation{Provider: "slack", ExternalID: "T1", Name: "One"}, []byte("sealed"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SaveInstallation(ctx, &core.Installation{Provider: "github", ExternalID: "42"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, body string
		admin                    bool
		want                     int
		contains                 []string
	}{
		{"list needs the admin", "GET", "/v1/installations", "", false, 401, []string{"unauthorized"}},
		{"list", "GET", "/v1/installations", "", true, 200, []string{`"external_id":"T1"`, `"external_id":"42"`, `"has_more":false`}},
		{"list by provider", "GET", "/v1/installations?provider=slack&limit=1", "", true, 200, []string{`"external_id":"T1"`}},
		{"get", "GET", "/v1/installations/" + a.ID, "", true, 200, []string{`"has_token":true`, `"name":"One"`}},
		{"get unknown", "GET", "/v1/installations/ins_nope", "", true, 404, []string{"not_found"}},
		{"bind by name", "POST", "/v1/installations/" + a.ID, `{"agent":"helper"}`, true, 200, []string{`"agent":"` + agent.ID + `"`}},
		{"policy", "POST", "/v1/installations/" + a.ID, `{"policy":{"channels":["C1"],"users":["U1","U2"]}}`, true, 200, []string{`"channels":["C1"]`, `"agent":"` + agent.ID + `"`}},
		{"unknown agent", "POST", "/v1/installations/" + a.ID, `{"agent":"nobody"}`, true, 400, []string{`agent \"nobody\" not found`}},
		{"unknown field", "POST", "/v1/installations/" + a.ID, `{"agnet":"helper"}`, true, 400, []string{"agnet"}},
		{"empty policy entry", "POST", "/v1/installations/" + a.ID, `{"policy":{"users":[""]}}`, true, 400, []string{"empty"}},
		{"budget approvers", "POST", "/v1/installations/" + a.ID, `{"budget_approvers":["U9"]}`, true, 200, []string{`"budget_approvers":["U9"]`, `"users":["U1","U2"]`}},
		{"empty budget approver", "POST", "/v1/installations/" + a.ID, `{"budget_approvers":["U1",""]}`, true, 400, []string{"budget_approvers"}},
		{"tenant group", "POST", "/v1/installations/" + a.ID, `{"tenant_group":"acme"}`, true, 200, []string{`"tenant_group":"acme"`}},
		{"tenant group with spaces", "POST", "/v1/installations/" + a.ID, `{"tenant_group":" acme"}`, true, 400, []string{"tenant_group"}},
		{"unbind", "POST", "/v1/installations/" + a.ID, `{"agent":null}`, true, 200, []string{`"users":["U1","U2"]`, `"budget_approvers":["U9"]`, `"tenant_group":"acme"`}},
		{"no token in any answer", "GET", "/v1/installations/" + a.ID, "", true, 200, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(tc.method, tc.path, tc.body, tc.admin)
			if code != tc.want {
				t.Fatalf("%d %s", code, body)
			}
			for _, c := range tc.contains {
				if !strings.Contains(body, c) {
					t.Fatalf("answer %s lacks %s", body, c)
				}
			}
			if strings.Contains(body, "sealed") {
				t.Fatalf("answer carries the tokens: %s", body)
			}
		})
	}
	var got core.Installation
	_, body := do("GET", "/v1/installations/"+a.ID, "", true)
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Agent != "" {
		t.Fatalf("after unbind: %s", body)
	}

	t.Run("delete revokes and forgets even when the platform refuses", func(t *testing.T) {
		rv.err = errors.New("slack is down")
		if code, body := do("DELETE", "/v1/installations/"+a.ID, "", true); code != 204 {
			t.Fatalf("%d %s", code, body)
		}
		if len(rv.revoked) != 1 || rv.revoked[0] != a.ID {
			t.Fatalf("revoked %v", rv.revoked)
		}
		if _, err := store.InstallationTokens(ctx, a.ID); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("tokens kept: %v", err)
		}
		if code, _ := do("DELETE", "/v1/installations/"+a.ID, "", true); code != 404 {
			t.Fatalf("second delete: %d", code)
		}
	})
}
