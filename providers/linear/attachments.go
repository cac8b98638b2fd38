package linear

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/attach"
)

// uploadHosts are where Linear serves uploaded files (they need the
// token): its upload host, and the API's host (a Linear served
// elsewhere, the test fake).
func (p *Provider) uploadHosts() []string {
	hosts := []string{"uploads.linear.app"}
	if u, err := url.Parse(p.cfg.APIURL); err == nil && u.Host != "" {
		hosts = append(hosts, u.Host)
	}
	return hosts
}

// attachments downloads the images a prompt shows, with the
// installation's token, which goes to Linear's upload hosts only.
func (p *Provider) attachments(ctx context.Context, in *core.Installation, text string) ([]core.Attachment, error) {
	images := attach.MarkdownImages(text)
	if len(images) == 0 || p.cfg.Attachments == nil {
		return nil, nil
	}
	ts, err := p.tokens.Get(ctx, in)
	if err != nil {
		return nil, err
	}
	hosts := p.uploadHosts()
	remotes := make([]attach.Remote, 0, len(images))
	for _, im := range images {
		remotes = append(remotes, attach.Remote{URL: im.URL, Name: im.Name, Hosts: hosts, AuthHosts: hosts,
			Header: http.Header{"Authorization": {"Bearer " + ts.AccessToken}}})
	}
	return p.cfg.Attachments.Fetch(ctx, remotes)
}
