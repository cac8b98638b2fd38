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
// references it (user.message.attachments). The gateway downloaded it
// with the platform's token, which never leaves the gateway, and stored
// its bytes under ID; one it did not keep has no ID and says why in
// Skipped.
type Attachment struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	MediaType string `json:"media_type,omitempty"`
	Size      int64  `json:"size"`
	Kind      string `json:"kind"`
	// Skipped says why the file was not kept ("over the 10 MiB limit",
	// "the app may not read files"); the model is told.
	Skipped string `json:"skipped,omitempty"`
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
