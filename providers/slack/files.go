package slack

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/attach"
)

// File is a file shared in a message (its event's files), as the gateway
// reads it.
type File struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Title              string `json:"title"`
	Mimetype           string `json:"mimetype"`
	Size               int64  `json:"size"`
	Mode               string `json:"mode"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
}

// filesScope is the bot scope that lets the app download files.
const filesScope = "files:read"

// filesOf reads the files of a message event; a list that does not
// decode is no files (the message is still taken).
func filesOf(inner json.RawMessage) []File {
	var m struct {
		Files []File `json:"files"`
	}
	_ = json.Unmarshal(inner, &m)
	return m.Files
}

// fileHosts are where Slack serves files from: its file host, and the
// Web API's host (a Slack served elsewhere, the test fake).
func (p *Provider) fileHosts() []string {
	hosts := []string{"files.slack.com"}
	if u, err := url.Parse(p.cfg.APIURL); err == nil && u.Host != "" {
		hosts = append(hosts, u.Host)
	}
	return hosts
}

// attachments records a message's files with the message, pending
// download (FetchAttachments): the event's answer waits for none, and a
// retry Slack sends is refused by its dedupe keys before anything is
// fetched.
func (p *Provider) attachments(in *core.Installation, files []File) []core.Attachment {
	if len(files) == 0 {
		return nil
	}
	remotes := make([]attach.Remote, 0, len(files))
	for _, f := range files {
		r := attach.Remote{ID: f.ID, URL: f.URLPrivateDownload, Name: f.Name, MediaType: f.Mimetype, Size: f.Size}
		if r.URL == "" {
			r.URL = f.URLPrivate
		}
		if r.Name == "" {
			r.Name = f.Title
		}
		switch {
		case len(in.Scopes) > 0 && !slices.Contains(in.Scopes, filesScope):
			r.Skipped = "the Slack app may not read files in this workspace: it lacks the " + filesScope + " scope (reinstall it to grant it)"
		case f.Mode == "tombstone":
			r.Skipped = "the file was deleted"
		case f.Mode == "hidden_by_limit":
			r.Skipped = "the file is hidden by the workspace's plan limits"
		case f.Mode == "external":
			r.Skipped = "it is a link to a file kept outside Slack"
		case r.URL == "":
			r.Skipped = "Slack gave no address to download it from"
		}
		remotes = append(remotes, r)
	}
	return p.cfg.Attachments.Record(core.AttachmentSource{Provider: Name, Tenant: in.ExternalID}, remotes)
}

// FetchAttachments downloads a workspace's pending attachments with its
// bot token, which goes to Slack's file hosts only and is kept nowhere
// with them.
func (p *Provider) FetchAttachments(ctx context.Context, tenant string, atts []core.Attachment) ([]core.Attachment, error) {
	access, err := attach.TokenAccess(ctx, p.installation, p.tokens, tenant, "Slack app", p.fileHosts())
	if err != nil {
		return nil, err // the turn is tried again
	}
	return p.cfg.Attachments.Fetch(ctx, atts, access)
}
