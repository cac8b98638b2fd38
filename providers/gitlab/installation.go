package gitlab

import (
	"context"
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
)

// modeToken marks the installation of the single-project mode.
const modeToken = "token"

// Start records the single-project installation and learns the app's
// username from its token when the settings leave it out; OAuth
// installations are recorded by their install flow, and the app's user
// is read from the instance's (startOAuth).
func (p *Provider) Start(ctx context.Context) error {
	if p.cfg.Token == "" {
		return p.startOAuth(ctx)
	}
	in, err := p.cfg.Installations.SaveInstallation(ctx, &core.Installation{Provider: Name, ExternalID: p.tokenExternalID(),
		Name: p.cfg.Project, Metadata: map[string]string{"mode": modeToken, "url": p.cfg.URL}}, nil, nil)
	if err != nil {
		return fmt.Errorf("gitlab: record the project %s: %w", p.cfg.Project, err)
	}
	if p.appUser() != "" {
		return nil
	}
	c, err := p.apiClient(ctx, in)
	if err != nil {
		return err
	}
	u, _, err := c.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("SWITCHBOARD_GITLAB_TOKEN: read its user: %w", err)
	}
	p.mu.Lock()
	p.username = u.Username
	p.mu.Unlock()
	return nil
}

// tokenExternalID names the single project's installation: the instance
// and the project.
func (p *Provider) tokenExternalID() string { return p.host() + "/" + p.cfg.Project }

// installationFor is the installation that serves a project of the
// instance at instanceURL (the X-Gitlab-Instance header, or the project's
// web address): the single project's, or the instance's OAuth
// installation (oauthInstallation). ErrNotFound when none serves it.
func (p *Provider) installationFor(ctx context.Context, instanceURL, project string) (*core.Installation, error) {
	if p.cfg.Token != "" {
		if !strings.EqualFold(project, p.cfg.Project) {
			return nil, fmt.Errorf("project %s is not %s, the token's: %w", project, p.cfg.Project, core.ErrNotFound)
		}
		return p.cfg.Installations.FindInstallation(ctx, Name, p.tokenExternalID())
	}
	return p.oauthInstallation(ctx, instanceURL)
}

// InstallationOfKey is the installation that serves the project a key
// names.
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	project, _, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	return p.installationFor(ctx, p.cfg.URL, project)
}
