package github

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

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

// attachments records the images a comment (or review) shows with it,
// pending download (FetchAttachments): the delivery's answer waits for
// none.
func (p *Provider) attachments(installation int64, text string) []core.Attachment {
	return p.cfg.Attachments.RecordImages(core.AttachmentSource{Provider: Name, Tenant: strconv.FormatInt(installation, 10)}, text)
}

// FetchAttachments downloads an installation's pending images with its
// token.
func (p *Provider) FetchAttachments(ctx context.Context, tenant string, atts []core.Attachment) ([]core.Attachment, error) {
	hosts, auth := p.imageHosts()
	access := attach.Access{Hosts: hosts, AuthHosts: auth}
	installation, err := strconv.ParseInt(tenant, 10, 64)
	if err != nil {
		return attach.Skip(atts, "it came from no GitHub installation the gateway knows"), nil
	}
	tok, err := p.installationToken(ctx, installation)
	if err != nil {
		p.log.Warn("no installation token for a comment's images", "installation", installation, "err", err)
		access.Skipped = "the gateway could not get a token of the GitHub installation to download it"
	}
	access.Header = http.Header{"Authorization": {"token " + tok}}
	return p.cfg.Attachments.Fetch(ctx, atts, access)
}
