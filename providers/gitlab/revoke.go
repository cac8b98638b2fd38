package gitlab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
)

// Revoke revokes an OAuth installation's tokens at the instance (POST
// /oauth/revoke, the refresh token first: revoking it ends the grant, and
// the access token after it) before the gateway forgets them. The
// single-project token is the operator's: it is revoked in GitLab, not
// here. A token GitLab no longer knows has nothing left to revoke.
func (p *Provider) Revoke(ctx context.Context, in *core.Installation) error {
	p.own.tools.Forget(func(k string) bool { return k == in.ID })
	if in.Metadata["mode"] != modeOAuth || p.cfg.ClientID == "" {
		return nil
	}
	ts, err := p.own.tokens.Get(ctx, in)
	if errors.Is(err, oauth.ErrNoToken) {
		return nil
	}
	if err != nil {
		return err
	}
	// Both are asked for even when the first is refused: each that is
	// revoked is one less to leak.
	var errs []error
	for _, t := range []struct{ token, hint string }{{ts.RefreshToken, "refresh_token"}, {ts.AccessToken, "access_token"}} {
		if t.token == "" {
			continue
		}
		errs = append(errs, p.revokeToken(ctx, t.token, t.hint))
	}
	return errors.Join(errs...)
}

// revokeToken asks the instance to revoke one token (RFC 7009: 200 even
// for a token it does not know).
func (p *Provider) revokeToken(ctx context.Context, token, hint string) error {
	form := url.Values{"client_id": {p.cfg.ClientID}, "client_secret": {p.cfg.ClientSecret}, "token": {token}, "token_type_hint": {hint}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.URL+"/oauth/revoke", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("gitlab revoke: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	// A 400 or 401 is the instance refusing the application (a wrong
	// secret, a deleted application): the token may still work, so it
	// is no success.
	said, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("gitlab revoke of the %s: %s answered %s: %s", strings.ReplaceAll(hint, "_", " "), p.cfg.URL, resp.Status, strings.TrimSpace(string(said)))
}
