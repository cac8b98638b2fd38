package console_test

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSignIn(t *testing.T) {
	tests := []struct {
		name       string
		token      string
		want       int
		signedIn   bool
		failures   int
		wantInBody string
	}{
		{"the admin token", token, http.StatusSeeOther, true, 0, ""},
		{"a wrong token", "nope", http.StatusUnauthorized, false, 1, "not the admin token"},
		{"the token with a suffix", token + "x", http.StatusUnauthorized, false, 1, "not the admin token"},
		{"no token", "", http.StatusUnauthorized, false, 1, "not the admin token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			rec := e.do(req{method: "POST", path: "/console/sign-in", form: url.Values{"token": {tt.token}}})
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.wantInBody) {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			if got := e.store.signInCount(); (got == 1) != tt.signedIn {
				t.Fatalf("%d sign-ins stored", got)
			}
			if n := len(e.store.failures["192.0.2.1"]); n != tt.failures {
				t.Fatalf("%d failures recorded, want %d", n, tt.failures)
			}
			if !tt.signedIn {
				if c := rec.Result().Cookies(); len(c) != 0 {
					t.Fatalf("a failed sign-in set %v", c)
				}
				return
			}
			if loc := rec.Header().Get("Location"); loc != "./" {
				t.Fatalf("redirected to %q", loc)
			}
			for id, s := range e.store.signIns {
				if len(id) != 64 || s.CSRF == "" || s.KeyCheck == "" || strings.Contains(s.KeyCheck, token) || s.Address != "192.0.2.1" {
					t.Fatalf("stored sign-in %q %+v", id, s)
				}
				if !s.ExpiresAt.Equal(e.clock.Now().Add(12 * time.Hour)) {
					t.Fatalf("expires at %v", s.ExpiresAt)
				}
				if c := rec.Result().Cookies()[0]; c.Value == id || strings.Contains(id, c.Value) {
					t.Fatal("the store keeps the cookie's secret")
				}
			}
		})
	}
}

func TestCookieFlags(t *testing.T) {
	tests := []struct {
		publicURL, name, path string
		secure                bool
	}{
		{"", "switchboard_console", "/console/", false},
		{"http://gw.example:8080", "switchboard_console", "/console/", false},
		{"http://gw.example/switchboard/", "switchboard_console", "/switchboard/console/", false},
		{"https://gw.example", "__Host-switchboard_console", "/", true},
		{"https://gw.example/switchboard", "__Host-switchboard_console", "/", true},
	}
	for _, tt := range tests {
		t.Run(tt.publicURL, func(t *testing.T) {
			e := newEnv(t, tt.publicURL)
			rec := e.do(req{method: "POST", path: "/console/sign-in", form: url.Values{"token": {token}}})
			raw := rec.Header().Get("Set-Cookie")
			c := rec.Result().Cookies()[0]
			if c.Name != tt.name || c.Path != tt.path || c.Secure != tt.secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Domain != "" {
				t.Fatalf("cookie %q", raw)
			}
			if c.MaxAge != 12*3600 || !c.Expires.Equal(e.clock.Now().Add(12*time.Hour).Truncate(time.Second)) {
				t.Fatalf("cookie %q: lifetime", raw)
			}
			// The cookie works, and signing out clears it the same way.
			csrf := csrfOf(t, e.do(req{method: "GET", path: "/console/", cookie: c}).Body.String())
			out := e.do(req{method: "POST", path: "/console/sign-out", cookie: c, form: url.Values{"csrf": {csrf}}})
			cleared := out.Result().Cookies()
			if out.Code != http.StatusSeeOther || len(cleared) != 1 || cleared[0].Name != tt.name || cleared[0].Path != tt.path || cleared[0].MaxAge >= 0 || cleared[0].Value != "" {
				t.Fatalf("sign-out: %d %q", out.Code, out.Header().Values("Set-Cookie"))
			}
		})
	}
	if _, err := newConsole(t, "ftp://gw.example"); err == nil {
		t.Fatal("an ftp public URL was accepted")
	}
}

// TestSignedInOnly: a request without a valid sign-in never reaches a
// page: a read goes to the sign-in page, a write is refused.
func TestSignedInOnly(t *testing.T) {
	forged := func(*env) *http.Cookie {
		return &http.Cookie{Name: "switchboard_console", Value: base64.RawURLEncoding.EncodeToString([]byte(rand.Text() + "000000"))}
	}
	tests := []struct {
		name   string
		cookie func(e *env) *http.Cookie
		mux    func(e *env) *http.ServeMux
	}{
		{"no cookie", func(*env) *http.Cookie { return nil }, nil},
		{"forged", forged, nil},
		{"malformed", func(*env) *http.Cookie { return &http.Cookie{Name: "switchboard_console", Value: "%%%"} }, nil},
		{"expired", func(e *env) *http.Cookie {
			c, _ := e.signIn()
			e.clock.Advance(12 * time.Hour)
			return c
		}, nil},
		{"signed out", func(e *env) *http.Cookie {
			c, csrf := e.signIn()
			if rec := e.do(req{method: "POST", path: "/console/sign-out", cookie: c, form: url.Values{"csrf": {csrf}}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("sign out: %d", rec.Code)
			}
			return c
		}, nil},
		{"made with another admin token", func(e *env) *http.Cookie {
			c, _ := e.signIn()
			return c
		}, func(e *env) *http.ServeMux { return e.handler("the-new-admin-token", "") }},
	}
	pages := []struct{ path, location string }{
		{"/console/", "sign-in"},
		{"/console/sessions?status=running", "sign-in"},
		{"/console/events", "sign-in"},
		{"/console/no-such-page", "sign-in"},
		{"/console/deeper/page", "../sign-in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			c := tt.cookie(e)
			var mux *http.ServeMux
			if tt.mux != nil {
				mux = tt.mux(e)
			}
			for _, p := range pages {
				rec := e.do(req{method: "GET", path: p.path, cookie: c, mux: mux})
				if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != p.location {
					t.Errorf("GET %s: %d to %q", p.path, rec.Code, rec.Header().Get("Location"))
				}
			}
			before := e.store.signInCount()
			rec := e.do(req{method: "POST", path: "/console/sign-out", cookie: c, form: url.Values{"csrf": {"x"}}, mux: mux})
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "nothing was changed") {
				t.Errorf("POST sign-out: %d %s", rec.Code, rec.Body)
			}
			if e.store.signInCount() != before {
				t.Error("a refused sign-out deleted a sign-in")
			}
			// The sign-in page is for whoever is not signed in.
			if rec := e.do(req{method: "GET", path: "/console/sign-in", cookie: c, mux: mux}); rec.Code != http.StatusOK {
				t.Errorf("GET sign-in: %d", rec.Code)
			}
		})
	}
}

func TestSignedInSkipsTheSignInPage(t *testing.T) {
	e := newEnv(t, "")
	c, _ := e.signIn()
	if rec := e.do(req{method: "GET", path: "/console/sign-in", cookie: c}); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "./" {
		t.Fatalf("got %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := e.do(req{method: "GET", path: "/console"}); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "console/" {
		t.Fatalf("/console: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestCSRF(t *testing.T) {
	tests := []struct {
		name string
		form url.Values
	}{
		{"missing", url.Values{}},
		{"empty", url.Values{"csrf": {""}}},
		{"wrong", url.Values{"csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}},
		{"another sign-in's", nil},
		{"in the address only", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			c, csrf := e.signIn()
			path, form := "/console/sign-out", tt.form
			switch tt.name {
			case "another sign-in's":
				_, other := e.signIn()
				form = url.Values{"csrf": {other}}
			case "in the address only":
				path, form = path+"?csrf="+url.QueryEscape(csrf), url.Values{}
			}
			before := e.store.signInCount()
			rec := e.do(req{method: "POST", path: path, cookie: c, form: form})
			if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) != 0 {
				t.Fatalf("got %d %v", rec.Code, rec.Result().Cookies())
			}
			if e.store.signInCount() != before {
				t.Fatal("the sign-in was deleted")
			}
			if rec := e.do(req{method: "GET", path: "/console/", cookie: c}); rec.Code != http.StatusOK {
				t.Fatalf("still signed in? %d", rec.Code)
			}
		})
	}
}

func TestSignInRateLimit(t *testing.T) {
	e := newEnv(t, "")
	wrong := url.Values{"token": {"guess"}}
	right := url.Values{"token": {token}}
	for i := range 5 {
		if rec := e.do(req{method: "POST", path: "/console/sign-in", form: wrong}); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, rec.Code)
		}
		e.clock.Advance(time.Second)
	}
	for _, form := range []url.Values{wrong, right} {
		rec := e.do(req{method: "POST", path: "/console/sign-in", form: form})
		if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "Too many failed sign-ins") || len(rec.Result().Cookies()) != 0 {
			t.Fatalf("while limited, %s: %d %s", form.Get("token"), rec.Code, rec.Body)
		}
	}
	if e.store.signInCount() != 0 {
		t.Fatal("signed in while limited")
	}
	// Another address is not limited.
	if rec := e.do(req{method: "POST", path: "/console/sign-in", form: right, addr: "198.51.100.7"}); rec.Code != http.StatusSeeOther {
		t.Fatalf("another address: %d", rec.Code)
	}
	// A minute after the first failure one slot is free again.
	e.clock.Advance(time.Minute - 5*time.Second)
	if rec := e.do(req{method: "POST", path: "/console/sign-in", form: right}); rec.Code != http.StatusSeeOther {
		t.Fatalf("after the window: %d %s", rec.Code, rec.Body)
	}
}

// TestSignInRateLimitParallel: wrong sign-ins from one address sent at
// once are each counted before their token is checked, so five are
// checked (401) and the rest refused (429), the right token then too. The
// store holds them all at their first call, as a busy one may.
func TestSignInRateLimitParallel(t *testing.T) {
	e := newEnv(t, "")
	const n = 60
	e.store.signInGate = newGate(n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			codes[i] = e.do(req{method: "POST", path: "/console/sign-in", form: url.Values{"token": {"guess"}}}).Code
		})
	}
	wg.Wait()
	byCode := map[int]int{}
	for _, c := range codes {
		byCode[c]++
	}
	if byCode[http.StatusUnauthorized] != 5 || byCode[http.StatusTooManyRequests] != n-5 {
		t.Fatalf("answers %v, want 5 × 401 and %d × 429", byCode, n-5)
	}
	if rec := e.do(req{method: "POST", path: "/console/sign-in", form: url.Values{"token": {token}}}); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the right token while limited: %d", rec.Code)
	}
}
