package oauth

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestTokens(t *testing.T) {
	const callers = 5
	now := time.Unix(1_700_000_000, 0)
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1"}
	tests := []struct {
		name        string
		expiry      time.Time
		refreshErr  error
		wantToken   string
		wantRefresh int32
		wantErr     bool
	}{
		{"no expiry", time.Time{}, nil, "xoxb-old", 0, false},
		{"far from expiry", now.Add(time.Hour), nil, "xoxb-old", 0, false},
		{"within the margin", now.Add(time.Minute), nil, "xoxe-new", 1, false},
		{"expired", now.Add(-time.Minute), nil, "xoxe-new", 1, false},
		{"refresh fails, still valid", now.Add(time.Minute), errors.New("down"), "xoxb-old", 1, false},
		{"refresh fails, dead", now.Add(-time.Minute), errors.New("down"), "xoxb-old", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &memTokens{}
			var refreshes atomic.Int32
			// The refresh waits until all five callers have started or
			// joined it, so that they share it however they are scheduled.
			joined := make(chan struct{}, callers)
			tok := &Tokens{Store: store, Sealer: newSealer(t, testKey), Now: func() time.Time { return now },
				joined: func() { joined <- struct{}{} },
				Refresh: func(ctx context.Context, got *core.Installation, old TokenSet) (TokenSet, error) {
					refreshes.Add(1)
					for range callers {
						select {
						case <-joined:
						case <-time.After(30 * time.Second):
							t.Error("the callers did not all join the refresh")
							return TokenSet{}, errors.New("callers missing")
						}
					}
					if old.RefreshToken != "xoxe-r1" {
						t.Errorf("refreshed with %q", old.RefreshToken)
					}
					if tc.refreshErr != nil {
						return TokenSet{}, tc.refreshErr
					}
					return TokenSet{AccessToken: "xoxe-new", Expiry: now.Add(12 * time.Hour)}, nil
				}}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(tok.Put(t.Context(), in, TokenSet{AccessToken: "xoxb-old", RefreshToken: "xoxe-r1", Expiry: tc.expiry, Extra: map[string]string{"user_token": "xoxp-u"}}))
			if bytes.Contains(store.sealed["ins_1"], []byte("xoxb-old")) {
				t.Fatal("plaintext token at rest")
			}
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					ts, err := tok.Get(t.Context(), in)
					if (err != nil) != tc.wantErr || ts.AccessToken != tc.wantToken {
						t.Errorf("get: %q, %v", ts.AccessToken, err)
					}
				})
			}
			wg.Wait()
			if got := refreshes.Load(); got != tc.wantRefresh {
				t.Fatalf("%d refreshes, want %d", got, tc.wantRefresh)
			}
			if tc.wantToken == "xoxe-new" {
				ts, err := tok.Get(t.Context(), in)
				must(err)
				// The refresh token and extras carry over when the platform
				// does not send new ones.
				if ts.RefreshToken != "xoxe-r1" || ts.Extra["user_token"] != "xoxp-u" {
					t.Fatalf("after refresh %+v", ts)
				}
			}
		})
	}
	t.Run("no tokens", func(t *testing.T) {
		tok := &Tokens{Store: &memTokens{}, Sealer: newSealer(t, testKey)}
		if _, err := tok.Get(t.Context(), in); !errors.Is(err, ErrNoToken) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("moved to another installation", func(t *testing.T) {
		store := &memTokens{}
		tok := &Tokens{Store: store, Sealer: newSealer(t, testKey)}
		if err := tok.Put(t.Context(), in, TokenSet{AccessToken: "a"}); err != nil {
			t.Fatal(err)
		}
		store.sealed["ins_2"] = store.sealed["ins_1"]
		if _, err := tok.Get(t.Context(), &core.Installation{ID: "ins_2", Provider: "slack", ExternalID: "T2"}); err == nil {
			t.Fatal("tokens sealed for T1 opened as T2's")
		}
	})
}
