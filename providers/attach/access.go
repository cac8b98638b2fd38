package attach

import (
	"context"
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
)

// TokenAccess is the access of a platform that serves a tenant's files
// to the bearer of its installation's OAuth token (Slack, Linear): from
// hosts, the token to each of them. find looks the tenant's installation
// up. An installation, or a token, that is gone skips the files with a
// note naming app; another error (the token could not be renewed for
// now) is the caller's to try again.
func TokenAccess(ctx context.Context, find func(context.Context, string) (*core.Installation, error), tokens *oauth.Tokens,
	tenant, app string, hosts []string) (Access, error) {
	access := Access{Hosts: hosts, AuthHosts: hosts}
	in, err := find(ctx, tenant)
	if err == nil {
		var ts oauth.TokenSet
		if ts, err = tokens.Get(ctx, in); err == nil {
			access.Header = http.Header{"Authorization": {"Bearer " + ts.AccessToken}}
		}
	}
	switch {
	case errors.Is(err, core.ErrNotFound):
		access.Skipped = "the " + app + " is no longer installed there, or has no token"
	case err != nil:
		return access, err
	}
	return access, nil
}
