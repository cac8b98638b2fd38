package linear

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// TestRefreshSpendsARefreshTokenOnce: a 401 makes renew refresh while the
// same token enters its renewal margin for another caller; Linear's
// refresh tokens are single-use, so the second refresh must not present
// the one the first just spent.
func TestRefreshSpendsARefreshTokenOnce(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	uses := map[string]int{}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rt := req.FormValue("refresh_token")
		mu.Lock()
		uses[rt]++
		n := uses[rt]
		mu.Unlock()
		if n == 1 {
			once.Do(func() { close(entered); <-release })
		}
		w.Header().Set("Content-Type", "application/json")
		if n > 1 {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"error": "invalid_grant", "error_description": "refresh token already used"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-2", "token_type": "Bearer", "expires_in": 86400, "refresh_token": "ref-2"})
	}))
	defer srv.Close()
	r.p.cfg.APIURL = srv.URL

	// The rig's token expires in an hour; the clock moves into the margin
	// while the first refresh is under way. A look at the clock after the
	// move is the second caller's, made once it read the stored tokens.
	var clockMu sync.Mutex
	now, moved := time.Now(), false
	looked := make(chan struct{}, 1)
	r.p.tokens.Now = func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		if moved {
			select {
			case looked <- struct{}{}:
			default:
			}
		}
		return now
	}

	renewed := make(chan error, 1)
	go func() {
		_, err := r.p.renew(context.Background(), r.in, "tok")
		renewed <- err
	}()
	<-entered
	clockMu.Lock()
	now, moved = now.Add(58*time.Minute), true
	clockMu.Unlock()
	got := make(chan oauth.TokenSet, 1)
	go func() {
		ts, _ := r.p.tokens.Get(context.Background(), r.in)
		got <- ts
	}()
	// The second caller has the refresh token the first is spending, and
	// finds its token in the margin: it must not spend it again.
	select {
	case <-looked:
	case <-time.After(30 * time.Second):
		t.Fatal("the second caller never looked at its token's expiry")
	}
	close(release)
	if err := <-renewed; err != nil {
		t.Fatalf("renew: %v", err)
	}
	ts := <-got
	mu.Lock()
	defer mu.Unlock()
	if uses["ref"] != 1 {
		t.Fatalf("refresh token presented %d times", uses["ref"])
	}
	if ts.AccessToken != "tok-2" || ts.RefreshToken != "ref-2" {
		t.Fatalf("the second caller got %q/%q, want the rotated tokens", ts.AccessToken, ts.RefreshToken)
	}
	stored, err := r.p.tokens.Get(context.Background(), r.in)
	if err != nil || stored.RefreshToken != "ref-2" {
		t.Fatalf("stored refresh token %q (%v)", stored.RefreshToken, err)
	}
}

// TestRefusedTokenWithTheTokenEndpointDown: Linear refuses the access
// token and the renewal fails. Only a refresh token Linear refuses makes
// the refusal final (the sink gives the output up); a token endpoint that
// is down is an error retried later, so nothing is dropped.
func TestRefusedTokenWithTheTokenEndpointDown(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		permanent bool
	}{
		{"token endpoint down", http.StatusServiceUnavailable, false},
		{"refresh token refused", http.StatusBadRequest, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if req.URL.Path == "/oauth/token" {
					w.WriteHeader(tc.status)
					json.NewEncoder(w).Encode(map[string]any{"error": "invalid_grant"})
					return
				}
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": "Authentication required",
					"extensions": map[string]any{"type": "authentication error", "code": "AUTHENTICATION_ERROR"}}}})
			}))
			defer srv.Close()
			r.p.cfg.APIURL = srv.URL
			rc := &render{p: r.p, api: r.p.graphqlAPI(r.in), org: testOrg, agentSession: "as-1", session: "ses_1"}
			err := rc.api.createActivity(t.Context(), rc.activity("response", 1, map[string]any{"type": "response", "body": "x"}))
			if err == nil {
				t.Fatal("no error")
			}
			_, err = rc.settle(err)
			if output.IsPermanent(err) != tc.permanent {
				t.Fatalf("permanent %v, want %v: %v", output.IsPermanent(err), tc.permanent, err)
			}
		})
	}
}
