package page_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/page"
)

const admin = "admin-secret"

type fakeStore map[string]*core.Session

func (f fakeStore) GetSession(_ context.Context, id string) (*core.Session, error) {
	s, ok := f[id]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, core.ErrNotFound)
	}
	return s, nil
}

// GetAgentVersion knows one agent, agt_x, named reviewer.
func (f fakeStore) GetAgentVersion(_ context.Context, id string, version int) (*core.Agent, error) {
	if id != "agt_x" {
		return nil, fmt.Errorf("agent %q: %w", id, core.ErrNotFound)
	}
	return &core.Agent{ID: id, Name: "reviewer", Version: version}, nil
}

// setup serves the page with the API's real authentication over two
// sessions, returning the server, their ids and their client tokens.
func setup(t *testing.T) (srv *httptest.Server, ids []string, tokens map[string]string) {
	t.Helper()
	store := fakeStore{}
	tokens = map[string]string{}
	ids = []string{core.NewID(core.PrefixSession), core.NewID(core.PrefixSession)}
	for _, id := range ids {
		tok, hash := api.NewClientToken(id)
		tokens[id] = tok
		store[id] = &core.Session{
			ID: id, Status: core.StatusIdle, StopReason: core.ReasonCompleted,
			Agent: core.AgentRef{ID: "agt_x", Version: 2}, ClientTokenHash: hash, CreatedAt: core.Now(),
			Origin: &core.Origin{Provider: "linear", Key: "linear:o:i", URL: "javascript:alert(1)"},
		}
	}
	mux := http.NewServeMux()
	(&page.Handler{Store: store, Auth: &api.Auth{AdminToken: admin, Sessions: store}}).Register(mux)
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, ids, tokens
}

func get(t *testing.T, url, bearer string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func checkSecurityHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: CSP %q lacks %q", resp.Request.URL.Path, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
	if got := resp.Header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy %q", got)
	}
}

func TestPageRendersWithClientToken(t *testing.T) {
	srv, ids, tokens := setup(t)
	resp, body := get(t, srv.URL+"/sessions/"+ids[0]+"?token="+tokens[ids[0]], "")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	checkSecurityHeaders(t, resp)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("content type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	for _, want := range []string{`data-session="` + ids[0] + `"`, `data-status="idle"`, "completed", `<strong id="agent-name" title="agt_x">reviewer</strong> v`,
		`src="assets/page.js"`, `href="assets/page.css"`, " UTC</time>"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The script reads the token from the address; the HTML never has it.
	if strings.Contains(body, tokens[ids[0]]) {
		t.Fatal("the page contains the token")
	}
	// No inline script: the CSP would block it, and it is where XSS lives.
	if strings.Count(body, "<script") != 1 || !strings.Contains(body, `<script src="assets/page.js" defer></script>`) {
		t.Fatal("the page has an inline script")
	}
	// html/template refuses a javascript: origin link.
	if strings.Contains(body, "javascript:") {
		t.Fatal("origin URL rendered as a javascript: link")
	}
	if strings.Contains(body, `id="needs-token"`) {
		t.Fatal("token notice shown though the address has a token")
	}
}

func TestPageHeaderAuthDoesNotLeakToken(t *testing.T) {
	srv, ids, _ := setup(t)
	resp, body := get(t, srv.URL+"/sessions/"+ids[1], admin)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if strings.Contains(body, admin) {
		t.Fatal("the page contains the admin token")
	}
	if !strings.Contains(body, `id="needs-token"`) {
		t.Fatal("no notice that live updates need ?token=")
	}
}

func TestPageRefusals(t *testing.T) {
	srv, ids, tokens := setup(t)
	one, two := ids[0], ids[1]
	for _, c := range []struct {
		name, path, bearer string
		status             int
	}{
		{"no token", "/sessions/" + one, "", 401},
		{"bad token", "/sessions/" + one + "?token=nope", "", 401},
		{"forged client token", "/sessions/" + one + "?token=sbt_" + one + "_forged", "", 401},
		{"other session's token", "/sessions/" + two + "?token=" + tokens[one], "", 404},
		{"unknown session, admin", "/sessions/ses_missing?token=" + admin, "", 404},
		{"unknown session, header", "/sessions/ses_missing", admin, 404},
		{"script in id", "/sessions/%3Cscript%3E?token=" + admin, "", 404},
		{"unknown asset", "/sessions/assets/nope.js", "", 404},
		{"template is not an asset", "/sessions/assets/page.html", "", 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+c.path, c.bearer)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Fatalf("content type %q: want a plain answer", ct)
			}
			if strings.Contains(body, "<script") || strings.Contains(body, two) {
				t.Fatalf("answer echoes input: %q", body)
			}
			if c.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
			checkSecurityHeaders(t, resp)
		})
	}
}

func TestPageAssets(t *testing.T) {
	srv, _, _ := setup(t)
	for name, ctype := range map[string]string{"page.js": "javascript", "page.css": "text/css", "favicon.svg": "image/svg+xml"} {
		resp, body := get(t, srv.URL+page.AssetsPrefix+name, "")
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("%s: status %d", name, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, ctype) {
			t.Fatalf("%s: content type %q", name, ct)
		}
		checkSecurityHeaders(t, resp)
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", name)
		}
		req, _ := http.NewRequest("GET", srv.URL+page.AssetsPrefix+name, nil)
		req.Header.Set("If-None-Match", etag)
		r2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if r2.StatusCode != http.StatusNotModified {
			t.Fatalf("%s: revalidation answered %d", name, r2.StatusCode)
		}
	}
}

// TestPageScriptWritesNoHTML guards the XSS rule: the script builds the page
// from text nodes only.
func TestPageScriptWritesNoHTML(t *testing.T) {
	srv, _, _ := setup(t)
	_, js := get(t, srv.URL+page.AssetsPrefix+"page.js", "")
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(js, bad) {
			t.Errorf("page.js uses %s", bad)
		}
	}
}
