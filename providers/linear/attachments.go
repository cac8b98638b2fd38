package linear

import (
	"context"
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

// attachments records the images a prompt shows with it, pending
// download (FetchAttachments): the webhook's answer waits for none.
func (p *Provider) attachments(in *core.Installation, text string) []core.Attachment {
	return p.cfg.Attachments.RecordImages(core.AttachmentSource{Provider: Name, Tenant: in.ExternalID}, text)
}

// FetchAttachments downloads an organization's pending images with the
// installation's token, which goes to Linear's upload hosts only.
func (p *Provider) FetchAttachments(ctx context.Context, tenant string, atts []core.Attachment) ([]core.Attachment, error) {
	access, err := attach.TokenAccess(ctx, p.installation, p.tokens, tenant, "Linear app", p.uploadHosts())
	if err != nil {
		return nil, err // the turn is tried again
	}
	return p.cfg.Attachments.Fetch(ctx, atts, access)
}
