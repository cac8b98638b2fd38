package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"golang.org/x/sync/singleflight"
)

// TokenSet is what an installation's sealed tokens hold. It is only ever
// in memory in the clear: the store sees the sealed JSON.
type TokenSet struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: does not expire
	// Extra holds further secrets a provider keeps with the installation
	// (a Slack user token for search).
	Extra map[string]string `json:"extra,omitempty"`
}

// expiring reports whether the access token is within margin of expiry.
func (t TokenSet) expiring(now time.Time, margin time.Duration) bool {
	return !t.Expiry.IsZero() && !now.Add(margin).Before(t.Expiry)
}

// TokenStore is where sealed tokens live (core.InstallationStore).
// RefreshInstallationTokens orders refreshes across every process
// sharing the store: refresh tokens that rotate are single-use.
type TokenStore interface {
	InstallationTokens(ctx context.Context, id string) ([]byte, error)
	PutInstallationTokens(ctx context.Context, id string, sealed []byte, expiresAt *core.Time) error
	RefreshInstallationTokens(ctx context.Context, id string, refresh func(current []byte) (next []byte, expiresAt *core.Time, err error)) ([]byte, error)
}

// RefreshFunc renews an expiring token set at the platform.
type RefreshFunc func(ctx context.Context, in *core.Installation, old TokenSet) (TokenSet, error)

// DefaultRefreshMargin is how long before expiry a token is renewed: well
// before, so a call made with it cannot outlive it.
const DefaultRefreshMargin = 5 * time.Minute

// ErrNoToken: the installation has no tokens (uninstalled or revoked).
var ErrNoToken = fmt.Errorf("installation has no token: %w", core.ErrNotFound)

// Tokens seals installations' tokens at rest and hands them out, renewing
// a rotating token before it expires. One refresh runs per installation
// at a time: concurrent callers in a process share its result, and the
// store orders the processes sharing it (see Renew).
type Tokens struct {
	Store  TokenStore
	Sealer core.Sealer
	// Refresh renews tokens; nil: tokens are used until they fail.
	Refresh RefreshFunc
	Margin  time.Duration    // default DefaultRefreshMargin
	Now     func() time.Time // default time.Now
	group   singleflight.Group
	// joined, when set (tests), is told each time a caller has started or
	// joined an installation's refresh, before it waits for the result.
	joined func()
}

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Tokens) margin() time.Duration {
	if t.Margin > 0 {
		return t.Margin
	}
	return DefaultRefreshMargin
}

// Seal seals ts for in (by provider and external id, see
// core.InstallationAAD), for SaveInstallation; expires is ts's expiry.
func (t *Tokens) Seal(in *core.Installation, ts TokenSet) (sealed []byte, expires *core.Time, err error) {
	raw, err := json.Marshal(ts)
	if err != nil {
		return nil, nil, fmt.Errorf("encode tokens: %w", err)
	}
	sealed, err = t.Sealer.Seal(raw, core.InstallationAAD(in.Provider, in.ExternalID))
	if err != nil {
		return nil, nil, err
	}
	if !ts.Expiry.IsZero() {
		expires = core.NewTime(ts.Expiry).Ptr()
	}
	return sealed, expires, nil
}

// Put seals and stores ts as in's tokens.
func (t *Tokens) Put(ctx context.Context, in *core.Installation, ts TokenSet) error {
	sealed, exp, err := t.Seal(in, ts)
	if err != nil {
		return err
	}
	return t.Store.PutInstallationTokens(ctx, in.ID, sealed, exp)
}

// open reads and opens in's stored tokens.
func (t *Tokens) open(ctx context.Context, in *core.Installation) (TokenSet, error) {
	sealed, err := t.Store.InstallationTokens(ctx, in.ID)
	if errors.Is(err, core.ErrNotFound) {
		return TokenSet{}, ErrNoToken
	}
	if err != nil {
		return TokenSet{}, err
	}
	return t.unseal(in, sealed)
}

// unseal opens sealed tokens of in.
func (t *Tokens) unseal(in *core.Installation, sealed []byte) (TokenSet, error) {
	var ts TokenSet
	raw, err := t.Sealer.Open(sealed, core.InstallationAAD(in.Provider, in.ExternalID))
	if err != nil {
		return ts, fmt.Errorf("tokens of installation %s: %w", in.ID, err)
	}
	if err := json.Unmarshal(raw, &ts); err != nil {
		return ts, fmt.Errorf("tokens of installation %s: %w", in.ID, err)
	}
	return ts, nil
}

// Get returns in's tokens, renewed first when they expire within the
// margin and can be refreshed.
func (t *Tokens) Get(ctx context.Context, in *core.Installation) (TokenSet, error) {
	ts, err := t.open(ctx, in)
	if err != nil || t.Refresh == nil || ts.RefreshToken == "" || !ts.expiring(t.now(), t.margin()) {
		return ts, err
	}
	// Callers in this process share one renewal rather than queue at the
	// store for the lock one after the other.
	ch := t.group.DoChan(in.ID, func() (any, error) {
		cur, err := t.Renew(context.WithoutCancel(ctx), in, func(cur TokenSet) bool {
			return cur.expiring(t.now(), t.margin())
		})
		if err != nil && cur.AccessToken == "" && !errors.Is(err, ErrNoToken) {
			cur = ts // the lock or the read failed: what this caller read
		}
		return cur, err
	})
	if t.joined != nil {
		t.joined()
	}
	r := <-ch
	ts, err = r.Val.(TokenSet), r.Err
	if err != nil && !t.now().Before(ts.Expiry) {
		// Only fail when the old token is really dead; one that merely
		// entered the margin still works for this call.
		return ts, err
	}
	return ts, nil
}

// Renew refreshes in's tokens at the platform if stale says the stored
// ones need it, and returns the tokens stored when it ends. It runs under
// the store's refresh lock for in, so stale sees the tokens as the last
// renewal (in any process sharing the store) left them: a refresh token
// another caller spent is never spent again. On error it returns the
// tokens it found, if any; tokens that cannot be refreshed (no Refresh,
// no refresh token) are returned as they are.
func (t *Tokens) Renew(ctx context.Context, in *core.Installation, stale func(TokenSet) bool) (TokenSet, error) {
	var cur, got TokenSet
	ran := false
	_, err := t.Store.RefreshInstallationTokens(ctx, in.ID, func(sealed []byte) ([]byte, *core.Time, error) {
		ran = true
		var err error
		if cur, err = t.unseal(in, sealed); err != nil {
			return nil, nil, err
		}
		got = cur
		if t.Refresh == nil || cur.RefreshToken == "" || !stale(cur) {
			return nil, nil, nil
		}
		next, err := t.Refresh(ctx, in, cur)
		if err != nil {
			return nil, nil, err
		}
		if next.RefreshToken == "" {
			next.RefreshToken = cur.RefreshToken
		}
		if next.Extra == nil {
			next.Extra = cur.Extra
		}
		got = next
		return t.Seal(in, next)
	})
	switch {
	case !ran && errors.Is(err, core.ErrNotFound):
		return cur, ErrNoToken
	case err != nil:
		return cur, err
	}
	return got, nil
}
