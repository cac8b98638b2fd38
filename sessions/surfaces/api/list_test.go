package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// cappedStore reads at most max sessions a text-filtered page, so a test
// reaches the cap without thousands of sessions.
type cappedStore struct {
	core.Store
	max int
}

func (c cappedStore) ListSessions(ctx context.Context, f core.SessionFilter) (core.SessionList, error) {
	f.MaxExamined = c.max
	return c.Store.ListSessions(ctx, f)
}

type listAnswer struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	Next    string `json:"next"`
	Capped  bool   `json:"capped"`
}

func (l listAnswer) ids() []string {
	var out []string
	for _, d := range l.Data {
		out = append(out, d.ID)
	}
	return out
}

// TestListSessionsFilters: GET /v1/sessions filters by provider, tenant
// and first message, answers where the next page starts, and says when a
// text search stopped at its cap.
func TestListSessionsFilters(t *testing.T) {
	e := newAPI(t)
	mux := http.NewServeMux()
	(&api.Handler{Store: cappedStore{e.store, 3}, Runtime: &fakeRuntime{}}).Register(mux)
	srv := httptest.NewServer((&api.Auth{AdminToken: admin, Sessions: e.store}).Wrap(mux))
	t.Cleanup(srv.Close)
	e.srv = srv
	for i, s := range []struct{ provider, tenant, text string }{
		{"slack", "slack:T1", "Deploy the API"},
		{"slack", "slack:T2", "hay"},
		{"github", "github:o/r", "hay"},
		{"", "api", "hay"},
		{"", "api", "hay"},
		{"linear", "linear:org", "deploy it"},
	} {
		req := core.NewSession{Session: core.Session{ID: fmt.Sprintf("ses_l%d", i), Agent: core.AgentRef{ID: "agt_1", Version: 1}, Tenant: s.tenant},
			Inputs: []core.Event{core.NewInput(core.TypeUserMessage, json.RawMessage(fmt.Sprintf(`{"text":%q}`, s.text)))}}
		if s.provider != "" {
			req.Session.Origin = &core.Origin{Provider: s.provider, Key: fmt.Sprintf("%s:%d", s.provider, i)}
		}
		if _, err := e.store.CreateSession(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, query string
		want        []string
		// raw is what the page's answer holds beside its data.
		raw string
	}{
		{"provider", "provider=slack", []string{"ses_l0", "ses_l1"}, `"has_more":false}`},
		{"provider api", "provider=api", []string{"ses_l3", "ses_l4"}, `"has_more":false}`},
		{"tenant", "tenant=slack:T2", []string{"ses_l1"}, `"has_more":false}`},
		{"text ignores case", "q=DEPLOY", []string{"ses_l0"}, `"has_more":true,"next":"ses_l2","capped":true}`},
		{"text from the cap on", "q=DEPLOY&after=ses_l2", []string{"ses_l5"}, `"has_more":false}`},
		{"text and provider", "q=deploy&provider=linear", []string{"ses_l5"}, `"has_more":false}`},
		{"a full page", "provider=slack&limit=1", []string{"ses_l0"}, `"has_more":true,"next":"ses_l0"}`},
		{"a full text page", "q=deploy&provider=slack&limit=1", []string{"ses_l0"}, `"has_more":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := e.call(t, admin, "GET", "/v1/sessions?"+tc.query, nil)
			var l listAnswer
			if err := json.Unmarshal(raw, &l); err != nil || code != 200 || !slices.Equal(l.ids(), tc.want) || !strings.HasSuffix(strings.TrimSpace(string(raw)), tc.raw) {
				t.Fatalf("%s: %d %s; want %v and …%s", tc.query, code, raw, tc.want, tc.raw)
			}
		})
	}
	// Following next through a capped search finds every match.
	var found []string
	q := url.Values{"q": {"deploy"}}
	for range 10 {
		_, raw := e.call(t, admin, "GET", "/v1/sessions?"+q.Encode(), nil)
		var l listAnswer
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		found = append(found, l.ids()...)
		if !l.HasMore {
			break
		}
		q.Set("after", l.Next)
	}
	if !slices.Equal(found, []string{"ses_l0", "ses_l5"}) {
		t.Fatalf("paged search found %v", found)
	}
	// Each item carries the start of its first message, for a list to
	// tell the sessions apart.
	_, raw := e.call(t, admin, "GET", "/v1/sessions?tenant=slack:T1", nil)
	if !strings.Contains(string(raw), `"first_message":"Deploy the API"`) {
		t.Fatalf("list without first_message: %s", raw)
	}
	code, raw := e.call(t, admin, "GET", "/v1/sessions?q="+strings.Repeat("x", core.MaxFirstText+1), nil)
	wantError(t, code, raw, 400, "invalid_request", "q: longer than")
}
