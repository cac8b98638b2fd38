package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

type refreshResult struct {
	tokens []byte
	err    error
}

// TestRefreshInstallationTokensOneAtATime: a second replica refreshing
// the same installation waits for the first, then sees the tokens the
// first stored, and never the refresh token the first spent.
func TestRefreshInstallationTokensOneAtATime(t *testing.T) {
	s, dsn := openTest(t, Options{})
	a, _ := replica(t, dsn)
	b, bName := replica(t, dsn)
	ctx := t.Context()
	in, err := s.SaveInstallation(ctx, &core.Installation{Provider: "linear", ExternalID: "org1"}, []byte("tok-1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	exp := core.NewTime(time.Now().Add(time.Hour)).Ptr()

	entered, release := make(chan []byte, 1), make(chan struct{})
	resA := make(chan refreshResult, 1)
	go func() {
		tok, err := a.RefreshInstallationTokens(ctx, in.ID, func(cur []byte) ([]byte, *core.Time, error) {
			entered <- cur
			select {
			case <-release:
				return []byte("tok-2"), exp, nil
			case <-ctx.Done(): // the test failed: let the stores close
				return nil, nil, ctx.Err()
			}
		})
		resA <- refreshResult{tok, err}
	}()
	if cur := <-entered; string(cur) != "tok-1" {
		t.Fatalf("first refresher saw %q", cur)
	}

	bWent, bSaw := make(chan struct{}), make(chan []byte, 1)
	resB := make(chan refreshResult, 1)
	go func() {
		tok, err := b.RefreshInstallationTokens(ctx, in.ID, func(cur []byte) ([]byte, *core.Time, error) {
			close(bWent)
			bSaw <- cur
			if string(cur) == "tok-1" {
				return []byte("tok-spent-twice"), nil, nil
			}
			return nil, nil, nil // renewed meanwhile: keep them
		})
		resB <- refreshResult{tok, err}
	}()
	waitForLockWait(t, s, bName, bWent)
	close(release)

	if r := <-resA; r.err != nil || string(r.tokens) != "tok-2" {
		t.Fatalf("first refresh = %q, %v", r.tokens, r.err)
	}
	if cur := <-bSaw; string(cur) != "tok-2" {
		t.Fatalf("second refresher saw %q, want the first's tokens", cur)
	}
	if r := <-resB; r.err != nil || string(r.tokens) != "tok-2" {
		t.Fatalf("second refresh = %q, %v", r.tokens, r.err)
	}
	tok, err := s.InstallationTokens(ctx, in.ID)
	if err != nil || string(tok) != "tok-2" {
		t.Fatalf("stored %q, %v", tok, err)
	}
	got, err := s.GetInstallation(ctx, in.ID)
	if err != nil || !got.HasToken || got.TokenExpiresAt == nil || !got.TokenExpiresAt.Equal(exp.Time) {
		t.Fatalf("record %+v, %v", got, err)
	}
}

// TestRefreshInstallationTokensOutcomes: what a refresh stores, keeps and
// refuses, and that it always releases the lock.
func TestRefreshInstallationTokensOutcomes(t *testing.T) {
	errPlatform := errors.New("token endpoint refused")
	tests := []struct {
		name    string
		tokens  []byte // the installation's tokens; nil: none
		missing bool   // refresh an installation that does not exist
		next    []byte
		err     error
		want    string // tokens returned and stored after
		wantErr error
		ran     bool
	}{
		{name: "renewed", tokens: []byte("old"), next: []byte("new"), want: "new", ran: true},
		{name: "kept", tokens: []byte("old"), want: "old", ran: true},
		{name: "platform fails", tokens: []byte("old"), err: errPlatform, want: "old", wantErr: errPlatform, ran: true},
		{name: "empty refused", tokens: []byte("old"), next: []byte{}, want: "old", wantErr: core.ErrInvalid, ran: true},
		{name: "no tokens", wantErr: core.ErrNotFound},
		{name: "no installation", missing: true, wantErr: core.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t, Options{})
			ctx := t.Context()
			in, err := s.SaveInstallation(ctx, &core.Installation{Provider: "slack", ExternalID: "T1"}, tc.tokens, nil)
			if err != nil {
				t.Fatal(err)
			}
			id := in.ID
			if tc.missing {
				id = core.NewID(core.PrefixInstallation)
			}
			ran := false
			got, err := s.RefreshInstallationTokens(ctx, id, func(cur []byte) ([]byte, *core.Time, error) {
				ran = true
				return tc.next, nil, tc.err
			})
			if ran != tc.ran {
				t.Fatalf("refresh ran = %v, want %v", ran, tc.ran)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			} else if err != nil || string(got) != tc.want {
				t.Fatalf("refresh = %q, %v; want %q", got, err, tc.want)
			}
			if tc.want != "" {
				stored, err := s.InstallationTokens(ctx, id)
				if err != nil || string(stored) != tc.want {
					t.Fatalf("stored %q, %v; want %q", stored, err, tc.want)
				}
			}
			var held int
			err = s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2",
				int64(refreshLockClass), int64(uint32(lockKey(id)))).Scan(&held)
			if err != nil || held != 0 {
				t.Fatalf("the refresh lock is still held (%d), %v", held, err)
			}
		})
	}
}
