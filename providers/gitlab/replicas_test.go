package gitlab

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
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
// after GitLab refused the access token. GitLab rotates refresh tokens
// and revokes the one spent: one refresh reaches GitLab, and both
// replicas go on with the tokens it got. The replicas share a PostgreSQL
// database; two providers over one bbolt store (one process) behave the
// same.
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
			s := openStore(t)
			return [2]replicaStore{s, s}
		}},
	}
	cases := []struct {
		name    string
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
	w := newOAuthWorld(t)
	access, refresh := w.fake.Grant()
	if refused {
		w.fake.RemoveToken(access)
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
	target, err := url.Parse(w.fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/oauth/token" && refreshes.Add(1) == 1 {
			for _, r := range read {
				select {
				case <-r:
				case <-time.After(30 * time.Second):
					t.Error("a replica never read the tokens")
				}
			}
		}
		proxy.ServeHTTP(rw, req)
	}))
	defer front.Close()

	sealer := testSealer(t)
	var replicas [2]*Provider
	for i, s := range stores {
		var once sync.Once
		replicas[i], err = New(Config{URL: front.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
			Sessions: s, Installations: s, Sealer: sealer,
			Now: func() time.Time { once.Do(func() { close(read[i]) }); return time.Now() }})
		if err != nil {
			t.Fatal(err)
		}
	}
	host := replicas[0].host()
	in := &core.Installation{Provider: Name, ExternalID: oauthExternalID(host), Name: host, Metadata: map[string]string{"mode": modeOAuth, "url": front.URL}}
	sealed, exp, err := replicas[0].own.tokens.Seal(in, oauth.TokenSet{AccessToken: access, RefreshToken: refresh, Expiry: time.Now().Add(expires)})
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
			c, err := p.apiClient(ctx, in)
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
				return
			}
			if _, _, err := c.Users.CurrentUser(); err != nil {
				t.Errorf("replica %d: %v", i, err)
				return
			}
			if tokens[i], err = p.own.tokens.Get(ctx, in); err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	if got, reused := w.fake.Refreshes(); got != 1 || reused != 0 {
		t.Fatalf("GitLab granted %d refreshes and saw %d spent refresh tokens again, want 1 and 0", got, reused)
	}
	issued := w.fake.AccessTokens()
	renewed := issued[len(issued)-1]
	for i, ts := range tokens {
		if ts.AccessToken != renewed || ts.RefreshToken == refresh {
			t.Fatalf("replica %d has %q (refresh %q), want the refreshed %q", i, ts.AccessToken, ts.RefreshToken, renewed)
		}
	}
	// Both go on working with them.
	for i, p := range replicas {
		c, _ := p.apiClient(ctx, in)
		if _, _, err := c.Users.CurrentUser(); err != nil {
			t.Fatalf("replica %d after the refresh: %v", i, err)
		}
	}
}
