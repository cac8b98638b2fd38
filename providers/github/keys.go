package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// InstallationOfKey is the App's installation on the account that owns
// the repository an issue's or pull request's key names (an
// installation's name is its account's login).
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	owner, _, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	after := ""
	for {
		page, more, err := p.cfg.Installations.ListInstallations(ctx, core.InstallationQuery{Provider: Name, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, in := range page {
			if strings.EqualFold(in.Name, owner) && in.HasToken {
				return in, nil
			}
		}
		if !more || len(page) == 0 {
			return nil, fmt.Errorf("no GitHub installation on %s: %w", owner, core.ErrNotFound)
		}
		after = page[len(page)-1].ID
	}
}
