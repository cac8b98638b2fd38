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
	opts := []gl.ClientOptionFunc{gl.WithBaseURL(p.apiURL(in)), gl.WithHTTPClient(p.cfg.HTTPClient), gl.WithoutRetries()}
	if p.cfg.Token == "" {
		opts = append(opts, gl.WithInterceptor(p.renewOnRefusal(in)))
	}
	c, err := gl.NewAuthSourceClient(as, opts...)
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
