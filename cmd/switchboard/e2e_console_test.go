package main_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleAcrossReplicas: the console is served by serve and its
// sign-ins live in the shared store: a browser signed in through replica A
// is signed in on replica B, sees a session created through the API in
// the list, and a sign-out through B ends the sign-in on A too.
func TestConsoleAcrossReplicas(t *testing.T) {
	r := startReplicas(t, nil)
	a, b := r.srv[0], r.srv[1]
	id := a.createSession("find me in the console")

	cookie := consoleSignIn(t, a.url)
	code, body := consoleGet(t, b.url+"/console/sessions", cookie)
	if code != http.StatusOK || !strings.Contains(body, id) {
		t.Fatalf("sessions page through replica B: %d, session %s listed: %v", code, id, strings.Contains(body, id))
	}
	if strings.Contains(body, adminToken) {
		t.Fatal("the admin token is in a console page")
	}
	// The row names the agent and shows the first message; the agent
	// filter takes the name.
	for _, want := range []string{`">default</a> v`, `find me in the console`, `>default</option>`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the sessions page lacks %q:\n%s", want, body)
		}
	}
	if code, body := consoleGet(t, b.url+"/console/sessions?agent=default", cookie); code != http.StatusOK || !strings.Contains(body, id) {
		t.Fatalf("sessions of the agent named default: %d, session %s listed: %v", code, id, strings.Contains(body, id))
	}

	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if csrf == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	// Without the CSRF token the sign-out is refused and changes nothing.
	if code, _ := consolePost(t, b.url+"/console/sign-out", cookie, url.Values{}); code != http.StatusForbidden {
		t.Fatalf("sign-out without CSRF: %d, want 403", code)
	}
	if code, _ := consoleGet(t, a.url+"/console/", cookie); code != http.StatusOK {
		t.Fatalf("overview after a refused sign-out: %d", code)
	}
	if code, _ := consolePost(t, b.url+"/console/sign-out", cookie, url.Values{"csrf": {csrf[1]}}); code != http.StatusSeeOther {
		t.Fatalf("sign-out through B: %d, want 303", code)
	}
	if code, _ := consoleGet(t, a.url+"/console/", cookie); code != http.StatusSeeOther {
		t.Fatalf("overview through A after signing out on B: %d, want 303 to sign-in", code)
	}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// consoleSignIn signs in with the admin token and returns the cookie.
func consoleSignIn(t *testing.T, base string) *http.Cookie {
	t.Helper()
	resp, err := noRedirects.PostForm(base+"/console/sign-in", url.Values{"token": {adminToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("sign-in: %d with cookies %v", resp.StatusCode, resp.Cookies())
	}
	c := resp.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.MaxAge <= 0 && c.Expires.IsZero() {
		t.Fatalf("cookie flags: %+v", c)
	}
	return c
}

func consoleGet(t *testing.T, u string, c *http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(c)
	return consoleDo(t, req)
}

func consolePost(t *testing.T, u string, c *http.Cookie, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(c)
	return consoleDo(t, req)
}

func consoleDo(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("%s %s: CSP %q", req.Method, req.URL.Path, csp)
	}
	return resp.StatusCode, string(b)
}
