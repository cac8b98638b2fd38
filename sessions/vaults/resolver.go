package vaults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
)

const (
	// refreshLeeway: a token that expires within it is refreshed before
	// use, so it does not expire while the request is in flight.
	refreshLeeway = 60 * time.Second
	// refreshTimeout bounds one token request. It runs detached from the
	// caller's context, since callers that join the flight wait on it too
	// and its result is stored for all.
	refreshTimeout = 30 * time.Second
)

var _ core.CredentialSource = (*Resolver)(nil)

// Resolver turns vault credentials into headers for outbound requests (MCP
// servers, the egress proxy). Values go only into its return values: never
// into a log line or an error. Use a *Resolver and do not copy it.
type Resolver struct {
	Store  core.VaultStore
	Sealer core.Sealer
	// Sessions tells the tenancy of the session a scoped credential is
	// used for (core.WithCredentialSession); nil refuses every scoped
	// credential.
	Sessions Tenancies
	// HTTPClient talks to token endpoints (default http.DefaultClient).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock expiry is judged by (default time.Now).
	Now func() time.Time

	flights singleflight.Group
	mu      sync.Mutex
	locks   map[string]*idLock
	// joined, when set (tests), is told each time a caller has started or
	// joined a refresh flight, before it waits for the result.
	joined func()
}

type idLock struct {
	mu    sync.Mutex
	users int
}

func (r *Resolver) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

func (r *Resolver) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// Header returns the header that carries credential id to host.
func (r *Resolver) Header(ctx context.Context, id, host string) (string, string, error) {
	c, sec, err := r.use(ctx, id, func(c *core.Credential) error {
		// Before the owner: a credential bound elsewhere is not a refusal
		// of this request, whoever owns it.
		if !core.MatchHost(c.Hosts, host) {
			return fmt.Errorf("credential %s is not bound to host %q: %w", id, host, core.ErrForbidden)
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	v, err := r.secret(ctx, c, sec)
	if err != nil {
		return "", "", err
	}
	if c.Kind == core.CredentialHeader {
		return c.HeaderName, v, nil
	}
	return "Authorization", "Bearer " + v, nil
}

// Token returns the credential's bare secret, refreshing an expiring oauth
// token first. It does not check hosts: the caller hands the value to a
// process (a stdio server) rather than sending it to a host.
func (r *Resolver) Token(ctx context.Context, id string) (string, error) {
	c, sec, err := r.use(ctx, id, nil)
	if err != nil {
		return "", err
	}
	return r.secret(ctx, c, sec)
}

// Refresh renews an oauth credential whose token a server refused, even
// if it has not expired.
func (r *Resolver) Refresh(ctx context.Context, id string) error {
	c, _, err := r.use(ctx, id, nil)
	if err != nil {
		return err
	}
	if c.Kind != core.CredentialOAuth {
		return fmt.Errorf("credential %s is of kind %s, which cannot be refreshed: %w", id, c.Kind, core.ErrInvalid)
	}
	_, err = r.refresh(ctx, id, true)
	return err
}

// secret picks the value of c's kind.
func (r *Resolver) secret(ctx context.Context, c *core.Credential, sec core.CredentialSecret) (string, error) {
	var v string
	switch c.Kind {
	case core.CredentialStaticBearer:
		v = sec.Token
	case core.CredentialHeader:
		v = sec.Value
	case core.CredentialOAuth:
		if r.fresh(c, sec) {
			return sec.AccessToken, nil
		}
		return r.refresh(ctx, c.ID, false)
	default:
		return "", fmt.Errorf("credential %s has unknown kind %q", c.ID, c.Kind)
	}
	if v == "" {
		return "", fmt.Errorf("credential %s has no value stored", c.ID)
	}
	return v, nil
}

// fresh reports whether an oauth credential's access token can be used
// as is. One without an expiry is used until a server refuses it.
func (r *Resolver) fresh(c *core.Credential, sec core.CredentialSecret) bool {
	return sec.AccessToken != "" && (c.ExpiresAt == nil || c.ExpiresAt.After(r.now().Add(refreshLeeway)))
}

// use loads a credential for the session ctx names, refusing one that
// check refuses (check may be nil), then one of another owner (see
// checkUse), before its secret is opened.
func (r *Resolver) use(ctx context.Context, id string, check func(*core.Credential) error) (*core.Credential, core.CredentialSecret, error) {
	c, sealed, err := r.Store.GetCredential(ctx, id)
	if err != nil {
		return nil, core.CredentialSecret{}, fmt.Errorf("credential %s: %w", id, err)
	}
	if check != nil {
		if err := check(c); err != nil {
			return nil, core.CredentialSecret{}, err
		}
	}
	if err := r.checkUse(ctx, c); err != nil {
		return nil, core.CredentialSecret{}, err
	}
	sec, err := openSecret(r.Sealer, id, sealed)
	if err != nil {
		return nil, sec, err
	}
	return c, sec, nil
}

func (r *Resolver) load(ctx context.Context, id string) (*core.Credential, core.CredentialSecret, error) {
	c, sealed, err := r.Store.GetCredential(ctx, id)
	if err != nil {
		return nil, core.CredentialSecret{}, fmt.Errorf("credential %s: %w", id, err)
	}
	sec, err := openSecret(r.Sealer, id, sealed)
	if err != nil {
		return nil, sec, err
	}
	return c, sec, nil
}

// refresh gets a new access token for id. Concurrent callers share one
// token request: expiry-driven ones join a flight, forced ones (after a
// 401) another, and a per-credential lock keeps the two from spending
// the same refresh token at once (servers that rotate refresh tokens
// would refuse the second).
func (r *Resolver) refresh(ctx context.Context, id string, force bool) (string, error) {
	key := "expired\x00" + id
	if force {
		key = "forced\x00" + id
	}
	ch := r.flights.DoChan(key, func() (any, error) {
		unlock := r.lock(id)
		defer unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return r.renew(ctx, id, force)
	})
	if r.joined != nil {
		r.joined()
	}
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", fmt.Errorf("credential %s: waiting for token refresh: %w", id, ctx.Err())
	}
}

func (r *Resolver) lock(id string) (unlock func()) {
	r.mu.Lock()
	if r.locks == nil {
		r.locks = map[string]*idLock{}
	}
	l := r.locks[id]
	if l == nil {
		l = &idLock{}
		r.locks[id] = l
	}
	l.users++
	r.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		r.mu.Lock()
		if l.users--; l.users == 0 {
			delete(r.locks, id)
		}
		r.mu.Unlock()
	}
}

// renew runs under id's lock: it re-reads the credential (a flight that
// just finished may have refreshed it already), exchanges the refresh
// token and stores the result sealed.
func (r *Resolver) renew(ctx context.Context, id string, force bool) (string, error) {
	c, sec, err := r.load(ctx, id)
	if err != nil {
		return "", err
	}
	if c.Kind != core.CredentialOAuth {
		return "", fmt.Errorf("credential %s is of kind %s, which cannot be refreshed: %w", id, c.Kind, core.ErrInvalid)
	}
	if !force && r.fresh(c, sec) {
		return sec.AccessToken, nil
	}
	cfg := &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: sec.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: c.TokenURL},
		Scopes:       c.Scopes,
	}
	if r.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, r.HTTPClient)
	}
	// A token without an access token is never valid, so the source goes
	// straight to grant_type=refresh_token.
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: sec.RefreshToken}).Token()
	if err != nil {
		err = refreshError(id, c.TokenURL, err)
		r.log().Warn("vault credential refresh failed", "credential_id", id, "forced", force, "err", err)
		return "", err
	}

	// Re-read: the credential may have been rotated or deleted through the
	// API while the token request ran. A rotated refresh token wins, and
	// the token just fetched serves this call only.
	cur, curSec, err := r.load(ctx, id)
	if err != nil {
		return "", err
	}
	if curSec.RefreshToken != sec.RefreshToken {
		r.log().Info("vault credential rotated during refresh; not storing the refreshed token", "credential_id", id)
		return tok.AccessToken, nil
	}
	curSec.AccessToken = tok.AccessToken
	rotated := tok.RefreshToken != "" && tok.RefreshToken != curSec.RefreshToken
	if rotated {
		curSec.RefreshToken = tok.RefreshToken
	}
	cur.ExpiresAt = r.expiry(tok)
	sealed, err := sealSecret(r.Sealer, id, &curSec)
	if err != nil {
		return "", err
	}
	if _, err := r.Store.PutCredential(ctx, cur, sealed); err != nil {
		return "", fmt.Errorf("credential %s: store refreshed token: %w", id, err)
	}
	var exp any
	if cur.ExpiresAt != nil {
		exp = cur.ExpiresAt
	}
	r.log().Info("vault credential refreshed", "credential_id", id, "forced", force, "refresh_token_rotated", rotated, "expires_at", exp)
	return tok.AccessToken, nil
}

// expiry is judged by the resolver's clock: the server's expires_in
// counts from now, whatever clock oauth2 stamped Expiry with.
func (r *Resolver) expiry(tok *oauth2.Token) *core.Time {
	switch {
	case tok.ExpiresIn > 0:
		return core.NewTime(r.now().Add(time.Duration(tok.ExpiresIn) * time.Second)).Ptr()
	case !tok.Expiry.IsZero():
		return core.NewTime(tok.Expiry).Ptr()
	}
	return nil
}

// refreshError describes a failed token request without its response
// body, which a token endpoint may fill with what it was sent.
func refreshError(id, tokenURL string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		// The code is the server's text; only a plain one is quoted.
		code := re.ErrorCode
		if code == "" || len(code) > 40 || strings.ContainsFunc(code, func(c rune) bool { return c != '_' && (c < 'a' || c > 'z') }) {
			code = "no standard error code"
		}
		return fmt.Errorf("credential %s: token endpoint %s refused the refresh: status %d (%s)", id, tokenURL, status, code)
	}
	return fmt.Errorf("credential %s: refresh at %s: %w", id, tokenURL, err)
}
