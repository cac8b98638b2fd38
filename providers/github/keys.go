package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// InstallationOfKey is the App's active installation on the account that
// owns the repository an issue's or pull request's key names (an
// installation's name is its account's login; its tokens are made from
// the App's key, never stored, so its status says whether it serves).
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	owner, _, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	in, err := core.FindInstallationWhere(ctx, p.cfg.Installations, Name, func(in *core.Installation) bool {
		return strings.EqualFold(in.Name, owner) && installStatus(in) == statusActive
	})
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("no GitHub installation on %s: %w", owner, core.ErrNotFound)
	}
	return in, err
}

// KeyOfURL is the key of the issue or pull request a GitHub address
// names (<web URL>/<owner>/<repo>/pull/<n> or …/issues/<n>, anything
// after the number ignored); ok is false for an address of another host
// or shape.
func (p *Provider) KeyOfURL(_ context.Context, u *url.URL) (string, bool, error) {
	web, err := url.Parse(p.cfg.WebURL)
	if err != nil || !strings.EqualFold(u.Host, web.Host) {
		return "", false, nil
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(u.Path, strings.TrimSuffix(web.Path, "/")), "/"), "/")
	if len(parts) < 4 || (parts[2] != "pull" && parts[2] != "issues") {
		return "", false, nil
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return "", false, nil
	}
	return sessionKey(parts[0], parts[1], n), true, nil
}
