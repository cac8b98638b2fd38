package core

import (
	"context"
	"fmt"
	"strings"
)

// PrefixAttachment is the id prefix of stored attachments.
const PrefixAttachment = "att"

// The kinds of attachment, by what reaches the model.
const (
	// AttachmentImage is given to models that take images as image
	// content, and put in the sandbox for the others.
	AttachmentImage = "image"
	// AttachmentText is put inline in the message, up to a cap.
	AttachmentText = "text"
	// AttachmentFile is copied into the sandbox workspace under
	// SandboxAttachments.
	AttachmentFile = "file"
)

// SandboxAttachments is the folder of the sandbox workspace that files
// attached to messages are copied into.
const SandboxAttachments = SandboxWorkspace + "/attachments"

// Attachment is a file or image on a triggering message, as the message
// references it (user.message.attachments). The message is stored with
// where the platform keeps the file (Source) and nothing downloaded, so a
// webhook is answered without waiting for a download: the attachment is
// pending. The turn that first reads the message downloads it, with the
// platform's token, which never leaves the gateway, stores its bytes
// under ID and logs it as fetched (AttachmentsFetchedBody); one it did
// not keep has no ID and says why in Skipped.
type Attachment struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	MediaType string `json:"media_type,omitempty"`
	Size      int64  `json:"size"`
	Kind      string `json:"kind"`
	// Skipped says why the file was not kept ("over the 10 MiB limit",
	// "the app may not read files"); the model is told.
	Skipped string `json:"skipped,omitempty"`
	// Source is where the platform keeps the file.
	Source *AttachmentSource `json:"source,omitempty"`
}

// AttachmentSource is where a platform keeps an attachment's file.
type AttachmentSource struct {
	// Provider is the platform, Tenant its installation (a Slack team, a
	// GitHub installation id, a Linear organization): whose token
	// downloads the file.
	Provider string `json:"provider"`
	Tenant   string `json:"tenant"`
	// FileID is the platform's id of the file, when it has one (Slack's
	// F…).
	FileID string `json:"file_id,omitempty"`
	URL    string `json:"url"`
}

// Pending reports whether the attachment is still to be downloaded from
// its source.
func (a Attachment) Pending() bool { return a.ID == "" && a.Skipped == "" && a.Source != nil }

// AttachmentFetcher downloads pending attachments and stores them.
type AttachmentFetcher interface {
	// FetchAttachments returns atts in order, each pending one stored
	// (with its id) or skipped with why, the others as they were. An
	// error (the store failed, ctx ended, the platform's token could not
	// be had for now) records nothing: the call may be made again.
	FetchAttachments(ctx context.Context, atts []Attachment) ([]Attachment, error)
}

// TypeAttachmentsFetched is the internal event a turn logs once it
// fetched the pending attachments of a message (AttachmentsFetchedBody).
const TypeAttachmentsFetched = "session.attachments_fetched"

// AttachmentsFetchedBody is the body of session.attachments_fetched: the
// attachments of the user.message of seq Seq (a fork of the log keeps
// seqs, not event ids), in its order, after the turn that first read it
// downloaded those that were pending. They stand for the message's own
// from then on.
type AttachmentsFetchedBody struct {
	Seq         uint64       `json:"seq"`
	Attachments []Attachment `json:"attachments"`
}

// FetchedAttachments maps the seqs of the user.messages of events whose
// attachments were fetched to their attachments as fetched.
func FetchedAttachments(events []Event) (map[uint64][]Attachment, error) {
	out := map[uint64][]Attachment{}
	for _, e := range events {
		if e.Type != TypeAttachmentsFetched {
			continue
		}
		var b AttachmentsFetchedBody
		if err := e.Decode(&b); err != nil {
			return nil, err
		}
		out[b.Seq] = b.Attachments
	}
	return out, nil
}

// SandboxPath is where the attachment is copied in the sandbox: its name,
// made safe, under SandboxAttachments, prefixed with its id's tail so that
// two files of one name do not overwrite each other.
func (a Attachment) SandboxPath() string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r < 0x20 || r == 0x7f:
			return '_'
		}
		return r
	}, a.Name)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		name = "file"
	}
	tail := a.ID
	if i := strings.LastIndex(tail, "_"); i >= 0 {
		tail = tail[i+1:]
	}
	if len(tail) > 6 {
		tail = tail[len(tail)-6:]
	}
	return SandboxAttachments + "/" + tail + "-" + name
}

// AttachmentKind is the kind of a file of this media type and name.
func AttachmentKind(mediaType, name string) string {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(mediaType, ";")[0]))
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return AttachmentImage
	case "application/json", "application/xml", "application/x-yaml", "application/yaml", "application/toml",
		"application/x-sh", "application/javascript", "application/sql":
		return AttachmentText
	}
	if strings.HasPrefix(mt, "text/") {
		return AttachmentText
	}
	if mt != "" && mt != "application/octet-stream" {
		return AttachmentFile
	}
	// No type said: the name's extension tells.
	switch ext := strings.ToLower(name[strings.LastIndex(name, ".")+1:]); ext {
	case "png", "jpg", "jpeg", "gif", "webp":
		return AttachmentImage
	case "txt", "md", "log", "csv", "tsv", "json", "yaml", "yml", "toml", "xml", "go", "py", "js", "ts", "sh", "sql", "diff", "patch":
		return AttachmentText
	}
	return AttachmentFile
}

// AttachmentStore keeps the bytes of attachments.
type AttachmentStore interface {
	// PutAttachment stores data as a new attachment and returns it with
	// its id and size set.
	PutAttachment(ctx context.Context, a Attachment, data []byte) (Attachment, error)
	// GetAttachment returns a stored attachment's bytes; ErrNotFound when
	// there is none with this id.
	GetAttachment(ctx context.Context, id string) ([]byte, error)
}

// FormatBytes writes a size as people read it: 512 B, 4.9 KiB, 12 KiB,
// 10 MiB (a decimal below ten).
func FormatBytes(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/(1<<10), "KiB"
	for _, next := range []string{"MiB", "GiB"} {
		if v < 1<<10 {
			break
		}
		v, unit = v/(1<<10), next
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
