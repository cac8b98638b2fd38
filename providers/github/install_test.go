package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

const installTestSecret = "install-test-webhook-secret"

// installRig is a provider over a real store and a fake GitHub, with its
// webhooks and install flow served by an httptest server.
type installRig struct {
	t     *testing.T
	p     *Provider
	store *bolt.Store
	fake  *fakegithub.Server
	srv   *httptest.Server
	flow  *oauth.Flow
}

var rigDelivery atomic.Int64

func newInstallRig(t *testing.T, key []byte) *installRig {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	fake := fakegithub.Start(t)
	if key == nil {
		key = fake.KeyPEM
	}
	p, err := New(Config{AppID: fake.AppID, PrivateKey: key, WebhookSecret: installTestSecret, Slug: fake.Slug,
		APIURL: fake.APIURL(), WebURL: fake.URL, Sessions: store, Installations: store, Intake: &providers.Intake{Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	states, err := oauth.NewStates("a master key for the github install tests", store)
	if err != nil {
		t.Fatal(err)
	}
	r := &installRig{t: t, p: p, store: store, fake: fake}
	r.flow = &oauth.Flow{Provider: Name, PublicURL: "https://gw.example", States: states, Installer: p.Installer()}
	mux := http.NewServeMux()
	p.RegisterWebhooks(mux)
	r.flow.Register(mux)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *installRig) get(path string) (int, string) {
	r.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(r.srv.URL + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusFound {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// state starts an install and returns the state GitHub would carry back.
func (r *installRig) state() string {
	r.t.Helper()
	code, loc := r.get("/oauth/github/install")
	if code != http.StatusFound {
		r.t.Fatalf("install: %d %s", code, loc)
	}
	u, err := url.Parse(loc)
	if err != nil {
		r.t.Fatal(err)
	}
	return u.Query().Get("state")
}

func (r *installRig) deliver(event string, payload map[string]any) int {
	r.t.Helper()
	return r.deliverAs(event, "rig-"+strconv.FormatInt(rigDelivery.Add(1), 10), payload)
}

// deliverAs sends a signed webhook under a delivery id of the test's.
func (r *installRig) deliverAs(event, delivery string, payload map[string]any) int {
	r.t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		r.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(fakegithub.SignedRequest(r.srv.URL+"/webhooks/github", installTestSecret, event, delivery, body))
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (r *installRig) installation(id int64) *core.Installation {
	r.t.Helper()
	in, err := r.store.FindInstallation(r.t.Context(), Name, strconv.FormatInt(id, 10))
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return in
}

func TestInstallRedirect(t *testing.T) {
	r := newInstallRig(t, nil)
	code, loc := r.get("/oauth/github/install")
	if code != http.StatusFound {
		t.Fatalf("install: %d", code)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Scheme+"://"+u.Host+u.Path, r.fake.URL+"/apps/"+r.fake.Slug+"/installations/new"; got != want {
		t.Fatalf("redirect to %s, want %s", got, want)
	}
	if u.Query().Get("state") == "" {
		t.Fatalf("no state in %s", loc)
	}
}

func TestInstallCallback(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.PutInstallation(fakegithub.Installation{ID: 501, Account: "acme", AccountType: "Organization", Selection: "all"})
	r.fake.PutInstallation(fakegithub.Installation{ID: 502, Account: "paused", Suspended: true})
	cb := func(q url.Values) string { return "/oauth/github/callback?" + q.Encode() }
	good := cb(url.Values{"installation_id": {"501"}, "setup_action": {"install"}, "state": {r.state()}})
	code, body := r.get(good)
	if code != 200 || !strings.Contains(body, "acme") {
		t.Fatalf("callback: %d %s", code, body)
	}
	in := r.installation(501)
	if in == nil || in.Name != "acme" || in.Agent != "" || in.Metadata[metaAccountType] != "Organization" ||
		in.Metadata[metaSelection] != "all" || in.Metadata[metaStatus] != statusActive {
		t.Fatalf("recorded %+v", in)
	}
	if code, _ := r.get(cb(url.Values{"installation_id": {"502"}, "setup_action": {"update"}, "state": {r.state()}})); code != 200 {
		t.Fatalf("suspended install: %d", code)
	}
	if in := r.installation(502); in == nil || in.Metadata[metaStatus] != statusSuspended {
		t.Fatalf("a suspended installation recorded as %+v", in)
	}
	tests := []struct {
		name string
		path func() string
		want int
		id   int64 // must not be recorded
	}{
		{"replayed state", func() string { return good }, 400, 0},
		{"no state", func() string { return cb(url.Values{"installation_id": {"503"}, "setup_action": {"install"}}) }, 400, 503},
		{"forged state", func() string {
			return cb(url.Values{"installation_id": {"503"}, "setup_action": {"install"}, "state": {r.state() + "x"}})
		}, 400, 503},
		{"installation the app cannot see", func() string {
			return cb(url.Values{"installation_id": {"503"}, "setup_action": {"install"}, "state": {r.state()}})
		}, 400, 503},
		{"no installation id", func() string { return cb(url.Values{"setup_action": {"install"}, "state": {r.state()}}) }, 400, 0},
		{"requested, not installed", func() string { return cb(url.Values{"setup_action": {"request"}, "state": {r.state()}}) }, 400, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := r.get(tc.path()); code != tc.want || !strings.Contains(body, "Install failed") {
				t.Fatalf("%d %s, want %d and an error page", code, body, tc.want)
			}
			if tc.id != 0 && r.installation(tc.id) != nil {
				t.Fatalf("installation %d stored", tc.id)
			}
		})
	}
}

// TestInstallCallbackWrongKey: an App JWT GitHub does not accept fails
// the install (502) and stores nothing.
func TestInstallCallbackWrongKey(t *testing.T) {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	r := newInstallRig(t, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)}))
	r.fake.AddInstallation(601, "acme")
	code, body := r.get("/oauth/github/callback?" + url.Values{"installation_id": {"601"}, "setup_action": {"install"}, "state": {r.state()}}.Encode())
	if code != http.StatusBadGateway {
		t.Fatalf("%d %s", code, body)
	}
	if r.installation(601) != nil {
		t.Fatal("installation stored although GitHub refused the JWT")
	}
}
