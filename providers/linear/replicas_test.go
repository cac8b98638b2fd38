package linear

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// replicaStore is what a replica of the gateway keeps its state in.
type replicaStore interface {
	Sessions
	Installations
}

// TestReplicasSpendARefreshTokenOnce: two replicas of the gateway renew
// the same installation's tokens at the same moment, ahead of expiry or
// after Linear refused the access token. Linear's refresh tokens are
// single-use: one refresh reaches Linear, and both replicas go on with
// the tokens it got. The replicas share a PostgreSQL database; two
// providers over one bbolt store (one process) behave the same.
func TestReplicasSpendARefreshTokenOnce(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) [2]replicaStore
	}{
		{"postgres, two replicas", func(t *testing.T) [2]replicaStore {
			dsn := pgtest.DSN(t)
			var out [2]replicaStore
			for i := range out {
				s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				out[i] = s
			}
			return out
		}},
		{"bbolt, one process", func(t *testing.T) [2]replicaStore {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return [2]replicaStore{s, s}
		}},
	}
	cases := []struct {
		name string
		// expires is the expiry stored with the tokens; refused makes
		// Linear refuse the access token before its time.
		expires time.Duration
		refused bool
	}{
		{name: "ahead of expiry", expires: time.Minute},
		{name: "after a 401", expires: time.Hour, refused: true},
	}
	for _, st := range stores {
		for _, tc := range cases {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				testReplicasRefresh(t, st.open(t), tc.expires, tc.refused)
			})
		}
	}
}

func testReplicasRefresh(t *testing.T, stores [2]replicaStore, expires time.Duration, refused bool) {
	ctx := t.Context()
	fake := fakelinear.New(t)
	fake.Token()
	grant := fake.TokensIssued()[0]
	if refused {
		fake.ExpireAccessTokens()
	}

	// Each replica tells when it has read the installation's tokens (its
	// first look at the clock, to see whether they expire); the token
	// endpoint holds the first refresh until both have, so that both
	// hold the refresh token it spends.
	var read [2]chan struct{}
	var refreshes atomic.Int32
	for i := range read {
		read[i] = make(chan struct{})
	}
	linear, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(linear)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/oauth/token" && refreshes.Add(1) == 1 {
			for _, r := range read {
				select {
				case <-r:
				case <-time.After(30 * time.Second):
					t.Error("a replica never read the tokens")
				}
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	defer front.Close()

	sealer, err := oauth.NewSealer("a master key for the linear tests")
	if err != nil {
		t.Fatal(err)
	}
	var replicas [2]*Provider
	for i, s := range stores {
		var once sync.Once
		replicas[i], err = New(Config{ClientID: fake.ClientID, ClientSecret: fake.ClientSecret, WebhookSecret: testSecret,
			APIURL: front.URL, Sessions: s, Installations: s, Sealer: sealer,
			Now: func() time.Time { once.Do(func() { close(read[i]) }); return time.Now() }})
		if err != nil {
			t.Fatal(err)
		}
	}
	in := &core.Installation{Provider: Name, ExternalID: fake.Org.ID, Name: fake.Org.Name}
	sealed, exp, err := replicas[0].tokens.Seal(in, oauth.TokenSet{AccessToken: grant.Access, RefreshToken: grant.Refresh, Expiry: time.Now().Add(expires)})
	if err != nil {
		t.Fatal(err)
	}
	if in, err = stores[0].SaveInstallation(ctx, in, sealed, exp); err != nil {
		t.Fatal(err)
	}

	start := make(chan struct{})
	var wg sync.WaitGroup
	var tokens [2]oauth.TokenSet
	for i, p := range replicas {
		wg.Go(func() {
			<-start
			if _, err := p.graphqlAPI(in).viewer(ctx); err != nil {
				t.Errorf("replica %d: %v", i, err)
				return
			}
			ts, err := p.tokens.Get(ctx, in)
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
			tokens[i] = ts
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	if n := refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes reached Linear, want 1", n)
	}
	var renewed []fakelinear.Token
	for _, g := range fake.TokensIssued() {
		if g.Grant == "refresh_token" {
			renewed = append(renewed, g)
		}
	}
	if len(renewed) != 1 {
		t.Fatalf("Linear granted %d refreshes, want 1", len(renewed))
	}
	for i, ts := range tokens {
		if ts.AccessToken != renewed[0].Access || ts.RefreshToken != renewed[0].Refresh {
			t.Fatalf("replica %d has %q/%q, want the refreshed %q/%q", i, ts.AccessToken, ts.RefreshToken, renewed[0].Access, renewed[0].Refresh)
		}
	}
	// Both go on working with them.
	for i, p := range replicas {
		if _, err := p.graphqlAPI(in).viewer(ctx); err != nil {
			t.Fatalf("replica %d after the refresh: %v", i, err)
		}
	}
}
