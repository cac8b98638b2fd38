package gitlab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
)

// apiClient is a REST client acting as an installation: with the project
// access token in single-project mode, else with the installation's OAuth
// token (installationAuth). Every REST call of the provider and its tools
// goes through it.
func (p *Provider) apiClient(ctx context.Context, in *core.Installation) (*gl.Client, error) {
	var as gl.AuthSource
	if p.cfg.Token != "" {
		as = gl.AccessTokenAuthSource{Token: p.cfg.Token}
	} else {
		if in == nil {
			return nil, fmt.Errorf("gitlab: no installation: %w", core.ErrNotFound)
		}
		var err error
		if as, err = p.installationAuth(ctx, in); err != nil {
			return nil, fmt.Errorf("gitlab installation %s: %w", in.ID, err)
		}
	}
	// No retries of the client's own: the output sink retries what it
	// posts under its exactly-once protocol, and an intake call that fails
	// answers 5xx so that GitLab delivers again.
	// The OAuth renewal wraps a copy of the shared client's transport:
	// gl.WithInterceptor would wrap the shared client itself, once more
	// on every call.
	hc := p.cfg.HTTPClient
	if p.cfg.Token == "" {
		cp := *hc
		cp.Transport = p.renewOnRefusal(in)(hc.Transport)
		hc = &cp
	}
	c, err := gl.NewAuthSourceClient(as, gl.WithBaseURL(p.apiURL(in)), gl.WithHTTPClient(hc), gl.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("gitlab client: %w", err)
	}
	return c, nil
}

// apiURL is the REST base of the instance an installation is on.
func (p *Provider) apiURL(in *core.Installation) string {
	base := p.cfg.URL
	if in != nil && in.Metadata["url"] != "" {
		base = strings.TrimSuffix(in.Metadata["url"], "/")
	}
	return base + "/api/v4"
}

// errNoOAuth: the gateway is in single-project mode or has no OAuth
// application.
var errNoOAuth = errors.New("gitlab: no OAuth application configured")
