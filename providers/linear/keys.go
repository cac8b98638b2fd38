package linear

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// InstallationOfKey is the installation of the organization an agent
// session's key names.
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	org, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	return p.cfg.Installations.FindInstallation(ctx, Name, org)
}
