package console_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSessionAttachTokens: the session page lists the attach tokens with
// a revoke for the live ones; making one for a person shows its secret
// once, with the command line for their editor; a revoke names the
// token to the API and returns to the page.
func TestSessionAttachTokens(t *testing.T) {
	e := newEnv(t, "https://gw.example.com")
	newFakeSession(e)
	var mu sync.Mutex
	var calls []string
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	e.api.HandleFunc("/v1/sessions/ses_1/attach_tokens", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Method == "GET" {
			writeJSON(w, 200, map[string]any{"has_more": false, "data": []map[string]any{
				{"id": "atk_ada", "session_id": "ses_1", "person": "Ada Lovelace", "issued_by": "admin", "created_at": "2030-05-06T07:00:00Z", "revoked_at": nil, "last_used_at": "2030-05-06T07:20:00Z"},
				{"id": "atk_old", "session_id": "ses_1", "person": "Alan Turing", "issued_by": "chat:U0ALAN", "created_at": "2030-05-06T06:00:00Z", "revoked_at": "2030-05-06T06:30:00Z", "last_used_at": nil},
			}})
			return
		}
		calls = append(calls, r.Method+" "+strings.TrimSpace(string(raw)))
		writeJSON(w, 201, map[string]any{"id": "atk_new", "session_id": "ses_1", "person": "Grace Hopper", "issued_by": "admin", "created_at": "2030-05-06T07:30:00Z",
			"token": "sba_ses_1_atk_new_5ec7e7"})
	})
	e.api.HandleFunc("DELETE /v1/sessions/ses_1/attach_tokens/{token}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, "DELETE "+r.PathValue("token"))
		writeJSON(w, 200, map[string]any{"id": r.PathValue("token"), "session_id": "ses_1", "person": "Ada Lovelace", "revoked_at": "2030-05-06T07:31:00Z"})
	})
	c, csrf := e.signIn()

	page := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
	for _, want := range []string{`data-attach-token="atk_ada"`, `<input type="hidden" name="token" value="atk_ada">`, `id="attach-token-form"`, "Alan Turing", "by chat:U0ALAN"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the session page has no %q", want)
		}
	}
	if strings.Contains(page, `value="atk_old"`) || strings.Contains(page, "sba_") {
		t.Fatal("the page offers to revoke a revoked token, or shows a secret")
	}

	rec := e.do(req{method: "POST", path: "/console/sessions/ses_1/attach-tokens", cookie: c, form: url.Values{"csrf": {csrf}, "person": {" Grace Hopper "}}})
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, `<pre id="attach-token-secret">sba_ses_1_atk_new_5ec7e7</pre>`) ||
		!strings.Contains(body, "SWITCHBOARD_TOKEN=sba_ses_1_atk_new_5ec7e7 switchboard acp --url https://gw.example.com") || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("make: %d %v\n%s", rec.Code, rec.Header(), body)
	}
	// The page is shown at the form's address: its links must lead where
	// the session page's own do, and the secret is not folded away.
	shownAt, _ := url.Parse("https://gw.example.com/console/sessions/ses_1/attach-tokens")
	for _, m := range regexp.MustCompile(`(?:action|href|data-stream|data-confirm|data-result)="([^"#]*)"`).FindAllStringSubmatch(body, -1) {
		ref, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil || ref.IsAbs() || strings.HasPrefix(m[1], "/") {
			continue
		}
		if got := shownAt.ResolveReference(ref).Path; !strings.HasPrefix(got, "/console/sessions/ses_1/") && !slices.Contains([]string{"/console/sessions", "/console/sessions/ses_1"}, got) &&
			(strings.HasPrefix(got, "/console/sessions/") || !strings.HasPrefix(got, "/console/")) {
			t.Errorf("%s=%q on the page shown after making a token leads to %s", strings.SplitN(m[0], "=", 2)[0], m[1], got)
		}
	}
	if !regexp.MustCompile(`<details id="controls"[^>]* open>`).MatchString(body) {
		t.Error("the controls holding the new token's secret are folded")
	}
	rec = e.do(req{method: "POST", path: "/console/sessions/ses_1/attach-tokens/revoke", cookie: c, form: url.Values{"csrf": {csrf}, "token": {"atk_ada"}}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "../../../sessions/ses_1" {
		t.Fatalf("revoke: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := e.do(req{method: "POST", path: "/console/sessions/ses_1/attach-tokens", cookie: c, form: url.Values{"person": {"Eve"}}}); rec.Code != http.StatusForbidden {
		t.Fatalf("without CSRF: %d", rec.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{`POST {"person":"Grace Hopper"}`, "DELETE atk_ada"}; strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Fatalf("the API got %q, want %q", calls, want)
	}
}
