package acpclient

import (
	"context"
	"encoding/base64"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// attachment is what the agent is given of a message's attachment: an
// image as image content when the agent takes images, else a link to the
// file, put in the sandbox's workspace; a note when it cannot be had.
func (t *turn) attachment(ctx context.Context, a core.Attachment) []acp.ContentBlock {
	note := func(why string) []acp.ContentBlock {
		return []acp.ContentBlock{acp.TextBlock(fmt.Sprintf("[Attached %s: %s]", a.Name, why))}
	}
	at := t.c.Attachments
	switch {
	case a.Skipped != "":
		return note("not read, " + a.Skipped)
	case a.ID == "" || at == nil || at.Store == nil:
		return note("not available here")
	}
	data, err := at.Store.GetAttachment(ctx, a.ID)
	if err != nil {
		return note(fmt.Sprintf("its content could not be read (%v)", err))
	}
	if a.Kind == core.AttachmentImage && t.ap.caps.PromptCapabilities.Image && len(data) <= harness.MaxImageBytes {
		return []acp.ContentBlock{acp.ImageBlock(base64.StdEncoding.EncodeToString(data), a.MediaType)}
	}
	path, err := at.Put(ctx, t.c.SessionID, a, data)
	if err != nil {
		return note(fmt.Sprintf("it could not be put in the sandbox (%v)", err))
	}
	link := acp.ResourceLinkBlock(a.Name, "file://"+path)
	if a.MediaType != "" {
		link.ResourceLink.MimeType = acp.Ptr(a.MediaType)
	}
	size := int(len(data))
	link.ResourceLink.Size = &size
	return []acp.ContentBlock{link}
}
