package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

const token = "admin-token-d6f1c0ffee"

const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// clock is the console's injected time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is a console over a fake store, driven through its mux.
type env struct {
	t     *testing.T
	store *fakeStore
	clock *clock
	mux   *http.ServeMux
	// api is the fake /v1 API the console calls in process; tests add
	// the endpoints they need. Without the admin token it answers 401.
	api *http.ServeMux
	// tokens are the admin tokens no body may contain.
	tokens []string
}

func newEnv(t *testing.T, publicURL string) *env {
	t.Helper()
	e := &env{t: t, store: newFakeStore(), clock: &clock{t: time.Date(2030, 5, 6, 7, 30, 0, 0, time.UTC)}, api: http.NewServeMux()}
	e.mux = e.handler(token, publicURL)
	return e
}

// handler is a console with admin token tok over e's store and clock.
func (e *env) handler(tok, publicURL string) *http.ServeMux {
	e.t.Helper()
	h, err := console.New(e.store, console.Config{AdminToken: tok, PublicURL: publicURL, Now: e.clock.Now, Heartbeat: time.Millisecond, Platforms: shipped(nil)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.tokens = append(e.tokens, tok)
	mux := http.NewServeMux()
	h.Register(mux, adminOnly(tok, e.api))
	return mux
}

// adminOnly is the API's authentication as the fake API needs it: the
// admin token as a bearer, or a 401 in the API's error shape.
func adminOnly(tok string, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+tok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"type":"unauthorized","message":"missing credentials"}}`))
			return
		}
		api.ServeHTTP(w, r)
	})
}

// req is one request to the console.
type req struct {
	method, path string
	cookie       *http.Cookie
	form         url.Values
	addr         string // client address; 192.0.2.1 when empty
	mux          *http.ServeMux
}

// do serves r and checks what every console answer must hold: the
// security headers, and no admin token in the body.
func (e *env) do(r req) *httptest.ResponseRecorder {
	e.t.Helper()
	var hr *http.Request
	if r.form != nil {
		hr = httptest.NewRequest(r.method, r.path, strings.NewReader(r.form.Encode()))
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		hr = httptest.NewRequest(r.method, r.path, nil)
	}
	hr.RemoteAddr = "192.0.2.1:40000"
	if r.addr != "" {
		hr.RemoteAddr = r.addr + ":40000"
	}
	if r.cookie != nil {
		hr.AddCookie(r.cookie)
	}
	if strings.HasPrefix(r.path, "/console/events") {
		// A stream would never end on a recorder: cancelled up front, it
		// ends after its answer has begun (TestEvents reads one).
		ctx, cancel := context.WithCancel(hr.Context())
		cancel()
		hr = hr.WithContext(ctx)
	}
	mux := r.mux
	if mux == nil {
		mux = e.mux
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, hr)
	checkHeaders(e.t, r.method+" "+r.path, rec.Result())
	for _, tok := range e.tokens {
		if strings.Contains(rec.Body.String(), tok) {
			e.t.Errorf("%s %s: the body holds the admin token", r.method, r.path)
		}
	}
	return rec
}

func checkHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	for k, want := range map[string]string{"Content-Security-Policy": wantCSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %s %q, want %q", what, k, got, want)
		}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: a page with Cache-Control %q", what, resp.Header.Get("Cache-Control"))
	}
}

// signIn signs in with the admin token and returns the cookie and the
// sign-in's CSRF token.
func (e *env) signIn() (*http.Cookie, string) {
	e.t.Helper()
	rec := e.do(req{method: "POST", path: "/console/sign-in", form: url.Values{"token": {token}}})
	if rec.Code != http.StatusSeeOther {
		e.t.Fatalf("sign in: %d %s", rec.Code, rec.Body)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		e.t.Fatalf("sign in set cookies %v", cookies)
	}
	c := cookies[0]
	page := e.do(req{method: "GET", path: "/console/", cookie: c})
	if page.Code != http.StatusOK {
		e.t.Fatalf("overview after sign-in: %d", page.Code)
	}
	return c, csrfOf(e.t, page.Body.String())
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF field in %s", body)
	}
	return m[1]
}

func newConsole(t *testing.T, publicURL string) (*console.Handler, error) {
	t.Helper()
	return console.New(newFakeStore(), console.Config{AdminToken: token, PublicURL: publicURL, Platforms: shipped(nil)})
}

// apiError answers as the API refuses: {"error":{"type","message"}}.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	web.WriteJSON(w, status, map[string]any{"error": map[string]string{"type": typ, "message": msg}})
}
