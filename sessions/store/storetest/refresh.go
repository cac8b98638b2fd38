package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// testRefreshOneAtATime: callers refreshing the same installation at
// once take turns. The first runs refresh with the tokens; the others
// wait, then run it with the tokens the first stored (never with the
// refresh token it spent) and keep them. A store that does not order
// refreshes lets a waiting caller read the spent tokens while the first
// is still at the platform; the stores' own tests check that the others
// really wait.
func testRefreshOneAtATime(t *testing.T, s InstallationStore) {
	const waiting = 4
	ctx := t.Context()
	in, err := s.SaveInstallation(ctx, &core.Installation{Provider: "tracker", ExternalID: "org1"}, []byte("tok-1"), nil)
	must(t, err)
	exp := core.NewTime(time.Now().Add(time.Hour)).Ptr()

	var mu sync.Mutex
	var saw []string // the tokens each run of refresh was given
	inside := 0      // runs of refresh under way
	enter := func(cur []byte) {
		mu.Lock()
		defer mu.Unlock()
		if inside++; inside > 1 {
			t.Errorf("refresh ran with %q while another ran", cur)
		}
		saw = append(saw, string(cur))
	}
	leave := func() { mu.Lock(); inside--; mu.Unlock() }

	type result struct {
		tokens []byte
		err    error
	}
	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan result, 1)
	go func() {
		tok, err := s.RefreshInstallationTokens(ctx, in.ID, func(cur []byte) ([]byte, *core.Time, error) {
			enter(cur)
			defer leave()
			close(entered)
			select {
			case <-release:
				return []byte("tok-2"), exp, nil
			case <-ctx.Done(): // the test failed: let the store close
				return nil, nil, ctx.Err()
			}
		})
		first <- result{tok, err}
	}()
	<-entered

	var started sync.WaitGroup
	others := make(chan result, waiting)
	for range waiting {
		started.Add(1)
		go func() {
			started.Done()
			tok, err := s.RefreshInstallationTokens(ctx, in.ID, func(cur []byte) ([]byte, *core.Time, error) {
				enter(cur)
				defer leave()
				if string(cur) == "tok-1" {
					return []byte("tok-spent-twice"), nil, nil
				}
				return nil, nil, nil // renewed meanwhile: keep them
			})
			others <- result{tok, err}
		}()
	}
	started.Wait()
	close(release)

	if r := <-first; r.err != nil || string(r.tokens) != "tok-2" {
		t.Fatalf("first refresh = %q, %v", r.tokens, r.err)
	}
	for range waiting {
		if r := <-others; r.err != nil || string(r.tokens) != "tok-2" {
			t.Errorf("a waiting refresh = %q, %v; want the first's tokens", r.tokens, r.err)
		}
	}
	mu.Lock()
	spent := 0
	for _, cur := range saw {
		if cur == "tok-1" {
			spent++
		}
	}
	mu.Unlock()
	if spent != 1 {
		t.Fatalf("refresh ran %d times with the first tokens (runs saw %q)", spent, saw)
	}
	tok, err := s.InstallationTokens(ctx, in.ID)
	must(t, err)
	got, err := s.GetInstallation(ctx, in.ID)
	must(t, err)
	if string(tok) != "tok-2" || !got.HasToken || got.TokenExpiresAt == nil || !got.TokenExpiresAt.Equal(exp.Time) {
		t.Fatalf("stored %q, record %+v", tok, got)
	}
}

// testRefreshOutcomes: what a refresh stores, keeps and refuses; a
// failed refresh leaves the tokens and their expiry as they were.
func testRefreshOutcomes(t *testing.T, s InstallationStore) {
	errPlatform := errors.New("token endpoint refused")
	ctx := t.Context()
	oldExp := core.NewTime(time.Now().Add(time.Minute)).Ptr()
	newExp := core.NewTime(time.Now().Add(time.Hour)).Ptr()
	tests := []struct {
		name     string
		tokens   []byte // the installation's tokens; nil: none
		missing  bool   // refresh an installation that does not exist
		next     []byte
		err      error
		want     string // tokens returned and stored after
		wantExp  *core.Time
		wantErr  error
		wantRuns int
	}{
		{name: "renewed", tokens: []byte("old"), next: []byte("new"), want: "new", wantExp: newExp, wantRuns: 1},
		{name: "kept", tokens: []byte("old"), want: "old", wantExp: oldExp, wantRuns: 1},
		{name: "platform fails", tokens: []byte("old"), err: errPlatform, want: "old", wantExp: oldExp, wantErr: errPlatform, wantRuns: 1},
		{name: "empty refused", tokens: []byte("old"), next: []byte{}, want: "old", wantExp: oldExp, wantErr: core.ErrInvalid, wantRuns: 1},
		{name: "no tokens", wantErr: core.ErrNotFound},
		{name: "no installation", missing: true, wantErr: core.ErrNotFound},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var exp *core.Time
			if tc.tokens != nil {
				exp = oldExp
			}
			in, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T" + string(rune('a'+i))}, tc.tokens, exp)
			must(t, err)
			id := in.ID
			if tc.missing {
				id = core.NewID(core.PrefixInstallation)
			}
			runs := 0
			got, err := s.RefreshInstallationTokens(ctx, id, func([]byte) ([]byte, *core.Time, error) {
				runs++
				return tc.next, newExp, tc.err
			})
			if runs != tc.wantRuns {
				t.Fatalf("refresh ran %d times, want %d", runs, tc.wantRuns)
			}
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr)
			} else if err != nil || string(got) != tc.want {
				t.Fatalf("refresh = %q, %v; want %q", got, err, tc.want)
			}
			if tc.want == "" {
				return
			}
			stored, err := s.InstallationTokens(ctx, id)
			must(t, err)
			rec, err := s.GetInstallation(ctx, id)
			must(t, err)
			if string(stored) != tc.want || rec.TokenExpiresAt == nil || !rec.TokenExpiresAt.Equal(tc.wantExp.Time) {
				t.Fatalf("stored %q, record %+v; want %q expiring %v", stored, rec, tc.want, tc.wantExp)
			}
		})
	}
}
