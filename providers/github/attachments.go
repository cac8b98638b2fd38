package github

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/attach"
)

// imageHosts are where GitHub serves the images of comments: the web host
// (github.com/user-attachments/…, which redirects to a signed address),
// and the hosts of the signed and of older uploads. The installation
// token goes to the web host only.
func (p *Provider) imageHosts() (hosts, auth []string) {
	u, _ := url.Parse(p.cfg.WebURL) // checked by config
	return []string{u.Host, "private-user-images.githubusercontent.com", "user-images.githubusercontent.com"}, []string{u.Host}
}

// attachments downloads the images a comment (or review) shows.
func (p *Provider) attachments(ctx context.Context, installation int64, text string) ([]core.Attachment, error) {
	images := attach.MarkdownImages(text)
	if len(images) == 0 || p.cfg.Attachments == nil {
		return nil, nil
	}
	hosts, auth := p.imageHosts()
	skipped := ""
	tok, err := p.installationToken(ctx, installation)
	if err != nil {
		p.log.Warn("no installation token for a comment's images", "installation", installation, "err", err)
		skipped = "the gateway could not get a token of the GitHub installation to download it"
	}
	remotes := make([]attach.Remote, 0, len(images))
	for _, im := range images {
		remotes = append(remotes, attach.Remote{URL: im.URL, Name: im.Name, Hosts: hosts, AuthHosts: auth,
			Header: http.Header{"Authorization": {"token " + tok}}, Skipped: skipped})
	}
	return p.cfg.Attachments.Fetch(ctx, remotes)
}
