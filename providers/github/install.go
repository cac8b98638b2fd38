package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

var _ providers.InstallFlow = (*Provider)(nil)

// Installer is the App's install flow. GitHub sends the person back to
// the App's Setup URL (set to /oauth/github/callback) with the
// installation id, not an OAuth code, so it is an
// oauth.CallbackInstaller.
func (p *Provider) Installer() oauth.Installer { return installer{p} }

type installer struct{ p *Provider }

var _ oauth.CallbackInstaller = installer{}

// AuthorizeURL is the App's install page. GitHub ignores redirectURI: it
// returns to the Setup URL registered on the App, carrying the state.
func (i installer) AuthorizeURL(state, _ string) string {
	return i.p.cfg.WebURL + "/apps/" + url.PathEscape(i.p.cfg.Slug) + "/installations/new?" + url.Values{"state": {state}}.Encode()
}

// Complete is never called: CompleteCallback finishes GitHub installs.
func (i installer) Complete(context.Context, string, string) (*core.Installation, error) {
	return nil, fmt.Errorf("a github app install completes with an installation id, not a code: %w", core.ErrInvalid)
}

// CompleteCallback verifies the installation the callback names with the
// App's JWT (GET /app/installations/{id}: GitHub answers only for
// installations of this App) and records it. An installation requested
// by someone who may not install it is recorded when an owner approves
// it (the installation event).
func (i installer) CompleteCallback(ctx context.Context, q url.Values, _ string) (*core.Installation, error) {
	p := i.p
	switch action := q.Get("setup_action"); action {
	case "install", "update", "":
	case "request":
		return nil, fmt.Errorf("the install was requested and waits for an owner of the account to approve it: %w", core.ErrInvalid)
	default:
		return nil, fmt.Errorf("setup_action %q is not one GitHub sends: %w", action, core.ErrInvalid)
	}
	raw := q.Get("installation_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, fmt.Errorf("installation_id %q: want a positive number: %w", raw, core.ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	gi, resp, err := p.appClient().Apps.GetInstallation(ctx, id)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("installation %d is not an installation of this App: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get installation %d with the app jwt: %w", id, err)
	}
	if gi.GetAppID() != 0 && gi.GetAppID() != p.cfg.AppID {
		return nil, fmt.Errorf("installation %d belongs to app %d, not %d: %w", id, gi.GetAppID(), p.cfg.AppID, core.ErrInvalid)
	}
	ch := installChange{action: "setup", account: gi.GetAccount().GetLogin(), accountType: gi.GetAccount().GetType(),
		selection: gi.GetRepositorySelection(), suspended: gi.SuspendedAt != nil}
	in, err := p.trackInstallation(ctx, id, ch, p.log)
	if err != nil {
		return nil, fmt.Errorf("record the installation: %w", err)
	}
	p.log.Info("github app installed", "installation_id", in.ID, "external_id", in.ExternalID, "account", in.Name, "setup_action", q.Get("setup_action"))
	return in, nil
}
