package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

type fakeInstaller struct {
	codes []string
	fail  bool
}

func (f *fakeInstaller) AuthorizeURL(state, redirectURI string) string {
	return "https://platform.example/authorize?" + url.Values{"state": {state}, "redirect_uri": {redirectURI}}.Encode()
}

func (f *fakeInstaller) Complete(_ context.Context, code, _ string) (*core.Installation, error) {
	f.codes = append(f.codes, code)
	if f.fail {
		return nil, errors.New("invalid_code")
	}
	return &core.Installation{ID: "ins_1", ExternalID: "T1", Name: "Team <One>"}, nil
}

func TestFlow(t *testing.T) {
	states, err := NewStates(testKey, &memOnce{})
	if err != nil {
		t.Fatal(err)
	}
	inst := &fakeInstaller{}
	f := &Flow{Provider: "slack", PublicURL: "https://gw.example/", States: states, Installer: inst}
	mux := http.NewServeMux()
	f.Register(mux)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	rec := get("/oauth/slack/install")
	if rec.Code != http.StatusFound {
		t.Fatalf("install: %d", rec.Code)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	state := loc.Query().Get("state")
	if loc.Host != "platform.example" || state == "" || loc.Query().Get("redirect_uri") != "https://gw.example/oauth/slack/callback" {
		t.Fatalf("redirect %s", loc)
	}
	cb := "/oauth/slack/callback?" + url.Values{"state": {state}, "code": {"c1"}}.Encode()
	rec = get(cb)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Team &lt;One&gt;") {
		t.Fatalf("callback: %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct {
		name, path string
		want       int
	}{
		{"replayed state", cb, 400},
		{"no state", "/oauth/slack/callback?code=c2", 400},
		{"denied", "/oauth/slack/callback?error=access_denied", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if rec := get(tc.path); rec.Code != tc.want {
				t.Fatalf("%d, want %d", rec.Code, tc.want)
			}
		})
	}
	if len(inst.codes) != 1 {
		t.Fatalf("codes exchanged: %v", inst.codes)
	}
	t.Run("exchange fails", func(t *testing.T) {
		inst.fail = true
		s, _ := states.Issue("slack")
		if rec := get("/oauth/slack/callback?" + url.Values{"state": {s}, "code": {"bad"}}.Encode()); rec.Code != http.StatusBadGateway {
			t.Fatalf("%d", rec.Code)
		}
	})
}

// queryInstaller completes installs from the callback's query, as a
// GitHub App install does (an installation id, no code).
type queryInstaller struct {
	fakeInstaller
	queries []url.Values
	err     error
}

func (q *queryInstaller) CompleteCallback(_ context.Context, query url.Values, _ string) (*core.Installation, error) {
	q.queries = append(q.queries, query)
	if q.err != nil {
		return nil, q.err
	}
	return &core.Installation{ID: "ins_2", ExternalID: query.Get("installation_id"), Name: "acme"}, nil
}

func TestFlowCallbackInstaller(t *testing.T) {
	states, err := NewStates(testKey, &memOnce{})
	if err != nil {
		t.Fatal(err)
	}
	inst := &queryInstaller{}
	f := &Flow{Provider: "github", PublicURL: "https://gw.example", States: states, Installer: inst}
	mux := http.NewServeMux()
	f.Register(mux)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	callback := func(q url.Values) string { return "/oauth/github/callback?" + q.Encode() }
	s, _ := states.Issue("github")
	ok := callback(url.Values{"state": {s}, "installation_id": {"77"}, "setup_action": {"install"}})
	if rec := get(ok); rec.Code != 200 || !strings.Contains(rec.Body.String(), "acme") {
		t.Fatalf("callback without a code: %d %s", rec.Code, rec.Body)
	}
	if len(inst.queries) != 1 || inst.queries[0].Get("installation_id") != "77" || len(inst.codes) != 0 {
		t.Fatalf("installer saw %v, codes %v", inst.queries, inst.codes)
	}
	tests := []struct {
		name string
		err  error
		path func() string
		want int
	}{
		{"replayed state", nil, func() string { return ok }, 400},
		{"no state", nil, func() string { return callback(url.Values{"installation_id": {"77"}}) }, 400},
		{"state of another provider", nil, func() string {
			s, _ := states.Issue("slack")
			return callback(url.Values{"state": {s}, "installation_id": {"77"}})
		}, 400},
		{"installation not visible", fmt.Errorf("installation 78: %w", core.ErrNotFound), func() string {
			s, _ := states.Issue("github")
			return callback(url.Values{"state": {s}, "installation_id": {"78"}})
		}, 400},
		{"platform down", errors.New("connection refused"), func() string {
			s, _ := states.Issue("github")
			return callback(url.Values{"state": {s}, "installation_id": {"79"}})
		}, http.StatusBadGateway},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst.err = tc.err
			before := len(inst.queries)
			rec := get(tc.path())
			if rec.Code != tc.want {
				t.Fatalf("%d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			reached := len(inst.queries) > before
			if reached != (tc.err != nil) {
				t.Fatalf("installer reached %v with a %s", reached, tc.name)
			}
		})
	}
}
