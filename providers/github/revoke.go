package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// Revoke revokes the installation tokens the process holds for an
// installation (DELETE /installation/token: the REST client's, and the
// repository tokens made for git) and forgets them. GitHub has no call
// that uninstalls an App for its owner: the installation stays on GitHub
// until someone uninstalls it there. An installation GitHub no longer
// knows (401, 404) has nothing left to revoke.
func (p *Provider) Revoke(ctx context.Context, in *core.Installation) error {
	id, err := strconv.ParseInt(in.ExternalID, 10, 64)
	if err != nil {
		return fmt.Errorf("github installation %q: %w", in.ExternalID, core.ErrInvalid)
	}
	clients := []*gh.Client{p.client(id)}
	prefix := in.ExternalID + ":"
	p.git.mu.Lock()
	for k, t := range p.git.m {
		if strings.HasPrefix(k, prefix) {
			clients = append(clients, p.newClient(t))
		}
	}
	p.git.mu.Unlock()
	p.forget(id)
	for _, c := range clients {
		resp, err := c.Apps.RevokeInstallationToken(ctx)
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("revoke github installation %d token: %w", id, err)
		}
	}
	return nil
}
