package vaults

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// tokenServer is a standard OAuth 2 token endpoint (RFC 6749 §6): it takes
// a form-encoded grant_type=refresh_token with client authentication in a
// Basic header or the form, and answers JSON. It rotates the refresh token
// on every use, as many providers do, and refuses a spent one.
type tokenServer struct {
	t   *testing.T
	e   *env
	srv *httptest.Server

	mu       sync.Mutex
	refresh  string // the one refresh token it accepts
	issued   []string
	seen     []url.Values
	gate     chan struct{} // when set, requests wait for it to close
	refuse   bool          // answer invalid_grant, echoing what it was sent
	clientID string
	secret   string
}

func newTokenServer(e *env, refresh string) *tokenServer {
	ts := &tokenServer{t: e.t, e: e, refresh: refresh, clientID: "client-1", secret: e.secret("client-secret")}
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.serve))
	e.t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *tokenServer) url() string { return ts.srv.URL + "/oauth/token" }

// hold makes token requests wait until the function returned is called
// (at the latest when the test ends).
func (ts *tokenServer) hold() (release func()) {
	gate := make(chan struct{})
	ts.mu.Lock()
	ts.gate = gate
	ts.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	ts.t.Cleanup(release)
	return release
}

// joinedAll makes r tell of each caller that started or joined a refresh,
// and returns a wait for n of them (failing the test after 30 s).
func joinedAll(t *testing.T, r *Resolver) (wait func(n int)) {
	joined := make(chan struct{}, 64)
	r.joined = func() { joined <- struct{}{} }
	return func(n int) {
		t.Helper()
		for i := range n {
			select {
			case <-joined:
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of %d callers joined the refresh", i, n)
			}
		}
	}
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/oauth/token" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		http.Error(w, "bad request shape", http.StatusBadRequest)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	ts.mu.Lock()
	ts.seen = append(ts.seen, r.PostForm)
	gate := ts.gate
	ts.mu.Unlock()
	if gate != nil {
		<-gate
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	fail := func(code int, e, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e, "error_description": desc})
	}
	switch {
	case id != ts.clientID || secret != ts.secret:
		fail(http.StatusUnauthorized, "invalid_client", "unknown client")
	case r.PostForm.Get("grant_type") != "refresh_token":
		fail(http.StatusBadRequest, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	case ts.refuse || r.PostForm.Get("refresh_token") != ts.refresh:
		fail(http.StatusBadRequest, "invalid_grant", "refresh token "+r.PostForm.Get("refresh_token")+" is not valid")
	default:
		access := ts.e.secret("access")
		ts.refresh = ts.e.secret("rotated-refresh")
		ts.issued = append(ts.issued, access)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": ts.refresh})
	}
}

// state returns what the server has seen and issued so far.
func (ts *tokenServer) state() (seen []url.Values, issued []string, refresh string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]url.Values(nil), ts.seen...), append([]string(nil), ts.issued...), ts.refresh
}

// oauthCredential creates, through the API, an oauth credential for the
// test server with the given access token (may be empty) and expiry.
func (e *env) oauthCredential(ts *tokenServer, refresh, access string, expires *core.Time) *core.Credential {
	e.t.Helper()
	v := e.newVault("oauth")
	body := map[string]any{"name": "o", "kind": "oauth", "hosts": []string{"mcp.example.com"}, "refresh_token": refresh,
		"token_url": ts.url(), "client_id": ts.clientID, "client_secret": ts.secret, "scopes": []string{"read"}}
	if access != "" {
		body["access_token"] = access
	}
	if expires != nil {
		body["expires_at"] = expires
	}
	return e.newCredential(v.ID, body)
}

func TestResolverStaticAndHeader(t *testing.T) {
	e := newEnv(t)
	r := e.resolver(nil)
	v := e.newVault("v")
	bearer, value := e.secret("bearer"), e.secret("value")
	sb := e.newCredential(v.ID, map[string]any{"name": "s", "kind": "static_bearer", "hosts": []string{"api.example.com", "*.corp.example"}, "token": bearer})
	hd := e.newCredential(v.ID, map[string]any{"name": "h", "kind": "header", "hosts": []string{"127.0.0.1:9000"}, "header_name": "x-api-key", "value": value})

	tests := []struct {
		name, id, host string
		wantName       string
		wantValue      string
		wantErr        error
	}{
		{"bearer exact", sb.ID, "api.example.com", "Authorization", "Bearer " + bearer, nil},
		{"bearer any port", sb.ID, "api.example.com:443", "Authorization", "Bearer " + bearer, nil},
		{"bearer wildcard", sb.ID, "git.corp.example", "Authorization", "Bearer " + bearer, nil},
		{"bearer other host", sb.ID, "evil.example.com", "", "", core.ErrForbidden},
		{"header host:port", hd.ID, "127.0.0.1:9000", "X-Api-Key", value, nil},
		{"header wrong port", hd.ID, "127.0.0.1:9001", "", "", core.ErrForbidden},
		{"missing", core.NewID(core.PrefixCredential), "api.example.com", "", "", core.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, val, err := r.Header(t.Context(), tc.id, tc.host)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.id) || val != "" {
					t.Fatalf("err = %v (value %d bytes), want %v naming %s", err, len(val), tc.wantErr, tc.id)
				}
				e.log.Warn("resolve refused", "credential_id", tc.id, "err", err) // as a caller would
				return
			}
			if err != nil || name != tc.wantName || val != tc.wantValue {
				t.Fatalf("= %q, (%d bytes), %v; want %q", name, len(val), err, tc.wantName)
			}
		})
	}
	if tok, err := r.Token(t.Context(), sb.ID); err != nil || tok != bearer {
		t.Fatalf("Token(static) = %d bytes, %v", len(tok), err)
	}
	if tok, err := r.Token(t.Context(), hd.ID); err != nil || tok != value {
		t.Fatalf("Token(header) = %d bytes, %v", len(tok), err)
	}
	if err := r.Refresh(t.Context(), sb.ID); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("Refresh(static) = %v, want ErrInvalid", err)
	}
}

func TestOAuthRefreshedBeforeUse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		access  bool
		expires time.Duration
	}{
		{"expired", true, -time.Minute},
		{"expiring within the leeway", true, 30 * time.Second},
		{"no access token yet", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			refresh := e.secret("refresh")
			ts := newTokenServer(e, refresh)
			var old string
			var exp *core.Time
			if tc.access {
				old = e.secret("old-access")
				exp = core.NewTime(time.Now().Add(tc.expires)).Ptr()
			}
			c := e.oauthCredential(ts, refresh, old, exp)
			r := e.resolver(ts.srv.Client())

			name, val, err := r.Header(t.Context(), c.ID, "mcp.example.com")
			if err != nil {
				t.Fatal(err)
			}
			seen, issued, rotated := ts.state()
			if len(seen) != 1 || len(issued) != 1 {
				t.Fatalf("token server saw %d requests and issued %d tokens, want 1", len(seen), len(issued))
			}
			if seen[0].Get("grant_type") != "refresh_token" || seen[0].Get("refresh_token") != refresh {
				t.Fatal("token request did not carry grant_type=refresh_token and the stored refresh token")
			}
			if name != "Authorization" || val != "Bearer "+issued[0] {
				t.Fatalf("Header = %q and a %d-byte value, want the new token", name, len(val))
			}
			// Stored sealed: the store's bytes open to the new tokens, and
			// the file does not hold them in the clear.
			stored, sec := e.stored(c.ID)
			if sec.AccessToken != issued[0] || sec.RefreshToken != rotated || sec.ClientSecret != ts.secret {
				t.Fatal("stored secret is not the refreshed one")
			}
			if stored.ExpiresAt == nil || time.Until(stored.ExpiresAt.Time) < 59*time.Minute {
				t.Fatalf("stored expiry = %v, want about an hour from now", stored.ExpiresAt)
			}
			for _, s := range []string{issued[0], rotated} {
				if e.fileHas(s) {
					t.Fatal("database file holds a refreshed token in plaintext")
				}
			}
			// Fresh now: used without asking the server again.
			if tok, err := r.Token(t.Context(), c.ID); err != nil || tok != issued[0] {
				t.Fatalf("Token after refresh = %d bytes, %v", len(tok), err)
			}
			if seen, _, _ := ts.state(); len(seen) != 1 {
				t.Fatalf("a fresh token was refreshed again: %d requests", len(seen))
			}
		})
	}
}

func TestOAuthRefreshAfter401(t *testing.T) {
	e := newEnv(t)
	refresh, access := e.secret("refresh"), e.secret("access")
	ts := newTokenServer(e, refresh)
	c := e.oauthCredential(ts, refresh, access, core.NewTime(time.Now().Add(time.Hour)).Ptr())
	r := e.resolver(ts.srv.Client())
	ctx := t.Context()

	if _, val, err := r.Header(ctx, c.ID, "mcp.example.com"); err != nil || val != "Bearer "+access {
		t.Fatalf("fresh Header = %d bytes, %v", len(val), err)
	}
	if seen, _, _ := ts.state(); len(seen) != 0 {
		t.Fatal("an unexpired token was refreshed")
	}
	// The server refused the token (a 401): Refresh forces a new one,
	// twice in a row, each newer than the last.
	for i := range 2 {
		if err := r.Refresh(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		_, issued, rotated := ts.state()
		if len(issued) != i+1 {
			t.Fatalf("after Refresh %d the server issued %d tokens", i+1, len(issued))
		}
		if _, val, err := r.Header(ctx, c.ID, "mcp.example.com"); err != nil || val != "Bearer "+issued[i] {
			t.Fatalf("Header after Refresh %d = %d bytes, %v", i+1, len(val), err)
		}
		if _, sec := e.stored(c.ID); sec.AccessToken != issued[i] || sec.RefreshToken != rotated {
			t.Fatal("the forced refresh was not stored")
		}
	}
}

func TestOAuthConcurrentRefreshOnce(t *testing.T) {
	e := newEnv(t)
	refresh := e.secret("refresh")
	ts := newTokenServer(e, refresh)
	c := e.oauthCredential(ts, refresh, e.secret("old"), core.NewTime(time.Now().Add(-time.Hour)).Ptr())
	r := e.resolver(ts.srv.Client())
	// The token server holds the request until every caller has started
	// or joined the refresh, however they are scheduled.
	waitJoined := joinedAll(t, r)

	const n = 20
	vals := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	release := ts.hold()
	for i := range n {
		wg.Go(func() {
			_, vals[i], errs[i] = r.Header(t.Context(), c.ID, "mcp.example.com")
		})
	}
	waitJoined(n)
	release()
	wg.Wait()
	seen, issued, _ := ts.state()
	if len(seen) != 1 {
		t.Fatalf("%d concurrent uses of an expired credential made %d token requests, want 1", n, len(seen))
	}
	for i := range n {
		if errs[i] != nil || vals[i] != "Bearer "+issued[0] {
			t.Fatalf("caller %d: %d bytes, %v", i, len(vals[i]), errs[i])
		}
	}
	// Concurrent forced refreshes are collapsed too, and never run beside
	// another refresh of the same credential (the server rotates refresh
	// tokens and would refuse a spent one).
	release = ts.hold()
	for range n {
		wg.Go(func() {
			if err := r.Refresh(t.Context(), c.ID); err != nil {
				t.Error(err)
			}
		})
	}
	waitJoined(n)
	release()
	wg.Wait()
	if seen, _, _ := ts.state(); len(seen) < 2 || len(seen) > 3 {
		t.Fatalf("%d concurrent Refresh calls made %d more token requests, want 1 or 2", n, len(seen)-1)
	}
}

func TestOAuthRefreshFailure(t *testing.T) {
	e := newEnv(t)
	refresh, access := e.secret("refresh"), e.secret("access")
	ts := newTokenServer(e, refresh)
	ts.refuse = true
	c := e.oauthCredential(ts, refresh, access, core.NewTime(time.Now().Add(-time.Minute)).Ptr())
	r := e.resolver(ts.srv.Client())

	_, val, err := r.Header(t.Context(), c.ID, "mcp.example.com")
	if err == nil || val != "" {
		t.Fatal("Header succeeded with a refused refresh")
	}
	// The server's answer quotes the refresh token; the error must not.
	if msg := err.Error(); !strings.Contains(msg, c.ID) || !strings.Contains(msg, "invalid_grant") || strings.Contains(msg, refresh) {
		t.Fatalf("err = %v, want it to name the credential and the error code only", err)
	}
	if _, sec := e.stored(c.ID); sec.AccessToken != access || sec.RefreshToken != refresh {
		t.Fatal("a failed refresh changed the stored secret")
	}
	if err := r.Refresh(t.Context(), c.ID); err == nil {
		t.Fatal("forced Refresh succeeded with a refusing server")
	}

	// A token endpoint that is down: the error names the credential.
	ts.srv.Close()
	ts.mu.Lock()
	ts.refuse = false
	ts.mu.Unlock()
	if err := r.Refresh(t.Context(), c.ID); err == nil || !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("Refresh with the server down = %v", err)
	}
}

func TestOAuthWaitHonoursContext(t *testing.T) {
	e := newEnv(t)
	refresh := e.secret("refresh")
	ts := newTokenServer(e, refresh)
	c := e.oauthCredential(ts, refresh, "", nil)
	r := e.resolver(ts.srv.Client())

	// The token server answers only after the caller's deadline passed.
	release := ts.hold()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Token(ctx, c.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	release()
	// The refresh ran on regardless and its result was stored, so the
	// next caller gets it without another request.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, sec := e.stored(c.ID); sec.AccessToken != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned refresh never stored its token")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tok, err := r.Token(t.Context(), c.ID)
	_, issued, _ := ts.state()
	if err != nil || len(issued) != 1 || tok != issued[0] {
		t.Fatalf("Token = %d bytes, %v; %d issued", len(tok), err, len(issued))
	}
}
