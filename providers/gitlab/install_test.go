package gitlab

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// oauthWorld is a fake GitLab with an OAuth application, and a provider
// in OAuth mode over a bbolt store.
type oauthWorld struct {
	fake  *fakegitlab.Server
	app   *fakegitlab.User
	store *bolt.Store
	p     *Provider
}

const (
	testClientID     = "gitlab-app-id"
	testClientSecret = "gitlab-app-secret"
	testHookSecret   = "gitlab-hook-secret"
)

func testSealer(t *testing.T) *oauth.Sealer {
	t.Helper()
	s, err := oauth.NewSealer("a master key for the gitlab tests")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openStore(t *testing.T) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newOAuthWorld(t *testing.T) *oauthWorld {
	t.Helper()
	w := &oauthWorld{fake: fakegitlab.Start(t), store: openStore(t)}
	w.app = w.fake.AddUser("sb-agent", "")
	w.fake.OAuthApp(testClientID, testClientSecret, w.app.ID, 0)
	p, err := New(Config{URL: w.fake.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
		Sessions: w.store, Installations: w.store, Sealer: testSealer(t)})
	if err != nil {
		t.Fatal(err)
	}
	w.p = p
	return w
}

// install installs the app as an admin would, through the gateway's
// install flow: its link, GitLab's consent page, the callback.
func (w *oauthWorld) install(t *testing.T) *core.Installation {
	t.Helper()
	if status, page := w.installAs(t); status != http.StatusOK {
		t.Fatalf("install: %d %s", status, page)
	}
	in, err := w.store.FindInstallation(t.Context(), Name, oauthExternalID(w.p.host()))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// installAs runs the install flow as whoever the fake's consent page
// authorizes, and returns the callback page's status and text.
func (w *oauthWorld) installAs(t *testing.T) (int, string) {
	t.Helper()
	once := openStore(t)
	states, err := oauth.NewStates("a master key for the gitlab tests", once)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	gw := httptest.NewServer(mux)
	defer gw.Close()
	(&oauth.Flow{Provider: Name, PublicURL: gw.URL, States: states, Installer: w.p.Installer()}).Register(mux)
	resp, err := gw.Client().Get(gw.URL + "/oauth/gitlab/install")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

func TestInstall(t *testing.T) {
	w := newOAuthWorld(t)
	in := w.install(t)
	if in.Metadata["mode"] != modeOAuth || in.Metadata["username"] != "sb-agent" || in.Metadata["url"] != w.fake.URL || !slices.Equal(in.Scopes, DefaultScopes) {
		t.Errorf("installation %+v", in)
	}
	if w.p.appUser() != "sb-agent" {
		t.Errorf("the app's user is %q, want the installing user", w.p.appUser())
	}
	// The consent page was asked with PKCE (S256), the scopes and the
	// callback; the fake refuses a code exchanged without the verifier.
	auth := w.fake.CallsTo(http.MethodGet, "/oauth/authorize")
	if len(auth) != 1 {
		t.Fatalf("%d authorize calls", len(auth))
	}
	tok := w.fake.CallsTo(http.MethodPost, "/oauth/token")
	if len(tok) != 1 || tok[0].Status != http.StatusOK || tok[0].Body["code_verifier"] == "" || tok[0].Body["grant_type"] != "authorization_code" {
		t.Fatalf("token calls %+v", tok)
	}
	// The tokens are sealed at rest and act as the app.
	ts, err := w.p.own.tokens.Get(t.Context(), in)
	if err != nil || ts.RefreshToken == "" || ts.Expiry.IsZero() {
		t.Fatalf("tokens %v, %v", ts.Expiry, err)
	}
	c, err := w.p.apiClient(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if u, _, err := c.Users.CurrentUser(); err != nil || u.Username != "sb-agent" {
		t.Fatalf("the installation acts as %v, %v", u, err)
	}
	// The instance's installation serves its webhooks, not another's.
	if got, err := w.p.oauthInstallation(t.Context(), w.fake.URL); err != nil || got.ID != in.ID {
		t.Errorf("oauthInstallation = %v, %v", got, err)
	}
	if _, err := w.p.oauthInstallation(t.Context(), "https://gitlab.example.org"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("another instance: %v", err)
	}
	// Installing again replaces the tokens of the one installation.
	again := w.install(t)
	if again.ID != in.ID {
		t.Errorf("a second install made installation %s beside %s", again.ID, in.ID)
	}
	if ts2, _ := w.p.own.tokens.Get(t.Context(), again); ts2.AccessToken == ts.AccessToken {
		t.Error("the second install kept the first tokens")
	}
}

func TestInstallRefusesAForgedCallback(t *testing.T) {
	w := newOAuthWorld(t)
	// A code the consent page issued for this state, exchanged with the
	// verifier of another state: GitLab refuses the PKCE check.
	u, _ := url.Parse((installer{w.p}).AuthorizeURL("state-a", "http://gw.test/oauth/gitlab/callback"))
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("scope") != "api read_user" {
		t.Fatalf("authorize URL %s", u)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	code := back.Query().Get("code")
	_, err = (installer{w.p}).CompleteCallback(t.Context(), url.Values{"code": {code}, "state": {"state-b"}}, "http://gw.test/oauth/gitlab/callback")
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("a code with another state's verifier: %v", err)
	}
	inst := installer{w.p}
	if _, err := inst.CompleteCallback(t.Context(), url.Values{"state": {"state-b"}}, ""); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("no code: %v", err)
	}
}

func TestSingleProjectModeHasNoInstallFlow(t *testing.T) {
	p, err := New(Config{WebhookSecret: testHookSecret, Token: "glpat-x", Project: "acme/app"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Installer() != nil {
		t.Error("single-project mode offers an install flow")
	}
}

func TestRevoke(t *testing.T) {
	w := newOAuthWorld(t)
	in := w.install(t)
	ts, err := w.p.own.tokens.Get(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.p.Revoke(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	want := []string{ts.RefreshToken, ts.AccessToken}
	if got := w.fake.Revoked(); !slices.Equal(got, want) {
		t.Fatalf("revoked %q, want the refresh then the access token", got)
	}
	c, _ := w.p.apiClient(t.Context(), in)
	if _, resp, err := c.Users.CurrentUser(); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the revoked token still works: %v", err)
	}
	// Nothing stored: nothing to revoke, no error.
	if err := w.store.ForgetInstallationTokens(t.Context(), in.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.p.Revoke(t.Context(), in); err != nil {
		t.Fatalf("revoke without tokens: %v", err)
	}
	// A single project's token is the operator's to revoke.
	tp, _ := New(Config{WebhookSecret: testHookSecret, Token: "glpat-x", Project: "acme/app", URL: w.fake.URL})
	if err := tp.Revoke(t.Context(), &core.Installation{ID: "ins_x", Provider: Name, Metadata: map[string]string{"mode": modeToken}}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.fake.Revoked()); n != 2 {
		t.Fatalf("%d revocations after a token-mode revoke", n)
	}
}

// TestRestartKnowsTheAppUser: a gateway started again after the install,
// without SWITCHBOARD_GITLAB_USERNAME, learns whom mentions name from the
// installation.
func TestRestartKnowsTheAppUser(t *testing.T) {
	w := newOAuthWorld(t)
	if err := w.p.startOAuth(t.Context()); err != nil || w.p.appUser() != "" {
		t.Fatalf("before the install: %q, %v", w.p.appUser(), err)
	}
	w.install(t)
	again, err := New(Config{URL: w.fake.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
		Sessions: w.store, Installations: w.store, Sealer: testSealer(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.startOAuth(t.Context()); err != nil || again.appUser() != "sb-agent" {
		t.Fatalf("after a restart: %q, %v", again.appUser(), err)
	}
	named, _ := New(Config{URL: w.fake.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
		Username: "someone-else", Sessions: w.store, Installations: w.store, Sealer: testSealer(t)})
	if err := named.startOAuth(t.Context()); err != nil || named.appUser() != "someone-else" {
		t.Fatalf("the setting lost to the installation: %q, %v", named.appUser(), err)
	}
}

// TestInstallRefusesAnotherUser: the install link is public; a second
// user who consents may not replace the app's tokens with their own, nor
// may anyone but the user the settings name install.
func TestInstallRefusesAnotherUser(t *testing.T) {
	w := newOAuthWorld(t)
	in := w.install(t)
	before, err := w.p.own.tokens.Get(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	mallory := w.fake.AddUser("mallory", "")
	w.fake.OAuthApp(testClientID, testClientSecret, mallory.ID, 0)
	status, page := w.installAs(t)
	if status != http.StatusBadRequest || !strings.Contains(page, "already installed by GitLab user sb-agent") {
		t.Fatalf("a second user's install: %d %s", status, page)
	}
	kept, err := w.store.FindInstallation(t.Context(), Name, oauthExternalID(w.p.host()))
	if err != nil || kept.Metadata["user_id"] != strconv.FormatInt(w.app.ID, 10) || kept.Metadata["username"] != "sb-agent" {
		t.Fatalf("installation after the refusal: %+v, %v", kept, err)
	}
	if after, err := w.p.own.tokens.Get(t.Context(), kept); err != nil || after.AccessToken != before.AccessToken || after.RefreshToken != before.RefreshToken {
		t.Fatalf("the first user's tokens were replaced (%v)", err)
	}
	// The first user may install again (renewing the tokens).
	w.fake.OAuthApp(testClientID, testClientSecret, w.app.ID, 0)
	w.install(t)

	// A gateway whose settings name the app's user refuses anyone else,
	// even on the first install.
	named := newOAuthWorld(t)
	p, err := New(Config{URL: named.fake.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
		Username: "someone-else", Sessions: named.store, Installations: named.store, Sealer: testSealer(t)})
	if err != nil {
		t.Fatal(err)
	}
	named.p = p
	status, page = named.installAs(t)
	if status != http.StatusBadRequest || !strings.Contains(page, "SWITCHBOARD_GITLAB_USERNAME") {
		t.Fatalf("an install by another user than the setting's: %d %s", status, page)
	}
	if _, err := named.store.FindInstallation(t.Context(), Name, oauthExternalID(p.host())); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the refused install was stored: %v", err)
	}
}

// TestAPIClientLeavesTheSharedClientAlone: the OAuth renewal wraps a copy
// of the provider's HTTP client per call; wrapping the shared one would
// stack a renewal per call (a refused token renewed once per layer) and
// race with the calls in flight. Run with -race.
func TestAPIClientLeavesTheSharedClientAlone(t *testing.T) {
	w := newOAuthWorld(t)
	in := w.install(t)
	shared := w.p.cfg.HTTPClient
	before := shared.Transport
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := w.p.apiClient(t.Context(), in)
			if err == nil {
				_, _, err = c.Users.CurrentUser()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if w.p.cfg.HTTPClient != shared || shared.Transport != before {
		t.Fatal("apiClient changed the provider's shared HTTP client")
	}
	// A refused token is renewed once, however many clients were made.
	ts, err := w.p.own.tokens.Get(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	w.fake.RemoveToken(ts.AccessToken)
	c, err := w.p.apiClient(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if u, _, err := c.Users.CurrentUser(); err != nil || u.Username != "sb-agent" {
		t.Fatalf("after a refused token: %v, %v", u, err)
	}
	if refreshes, reused := w.fake.Refreshes(); refreshes != 1 || reused != 0 {
		t.Fatalf("%d refreshes (%d reused refresh tokens), want one", refreshes, reused)
	}
}

// TestRevokeRefused: only a 2xx revokes (RFC 7009 answers 200 even for a
// token the instance does not know); a 400 or 401 is the instance
// refusing the application, and the error says what it answered.
func TestRevokeRefused(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{http.StatusBadRequest, `{"error":"invalid_request"}`},
		{http.StatusUnauthorized, `{"error":"invalid_client","error_description":"Client authentication failed"}`},
		{http.StatusInternalServerError, `oops`},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			p, err := New(Config{URL: srv.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret})
			if err != nil {
				t.Fatal(err)
			}
			err = p.revokeToken(t.Context(), "tok", "refresh_token")
			if err == nil || !strings.Contains(err.Error(), strconv.Itoa(tc.status)) || !strings.Contains(err.Error(), tc.body) {
				t.Fatalf("revoke answered %d: %v", tc.status, err)
			}
		})
	}
}
