package slack

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// InstallationOfKey is the installation of the workspace a thread's key
// names.
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	team, _, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	return p.cfg.Installations.FindInstallation(ctx, Name, team)
}
