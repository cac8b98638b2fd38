package harness

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// MaxInlineText bounds what of a text file goes into the message; the
// whole file is in the sandbox.
const MaxInlineText = 64 << 10

// MaxImageBytes bounds an image given to the model as image content (the
// Anthropic API refuses one over 5 MB); a larger one is put in the
// sandbox.
const MaxImageBytes = 5 << 20

// Attachments gives the model what the attachments of its messages hold:
// images as image content (models that take them), text files inline,
// the other files copied into the sandbox's workspace, downloading first
// those still pending (fetch.go). Its zero value tells the model only
// that files were attached.
type Attachments struct {
	Store AttachmentReader
	// Sandbox receives the files the model reads there; nil when the
	// gateway runs none.
	Sandbox core.Sandbox
	// Fetcher downloads the attachments messages hold pending (Fetch);
	// nil leaves them pending.
	Fetcher core.AttachmentFetcher
}

// AttachmentReader reads attachments' bytes (the store).
type AttachmentReader interface {
	GetAttachment(ctx context.Context, id string) ([]byte, error)
}

// attachmentLabel names an attachment for the model.
func attachmentLabel(a core.Attachment) string {
	what := "file"
	if a.Kind == core.AttachmentImage {
		what = "image"
	}
	if a.Size > 0 {
		return fmt.Sprintf("[Attached %s %s (%s)", what, a.Name, core.FormatBytes(a.Size))
	}
	return fmt.Sprintf("[Attached %s %s", what, a.Name)
}

// resolve replaces the attachment blocks of mc's messages with what the
// model gets, in a copy: the context stays as derived. copied remembers,
// per turn, the files already put in the sandbox. The messages before the
// first with an attachment block are not walked.
func (at *Attachments) resolve(ctx context.Context, sessionID string, images bool, mc *Context, copied map[string]string) ([]core.Message, error) {
	msgs := mc.Messages
	if mc.attachedFrom == 0 {
		return msgs, nil
	}
	var out []core.Message
	for i := mc.attachedFrom - 1; i < len(msgs); i++ {
		m := msgs[i]
		var blocks []core.Block
		for j, b := range m.Content {
			if b.Attachment == nil {
				if blocks != nil {
					blocks = append(blocks, b)
				}
				continue
			}
			if blocks == nil {
				blocks = append([]core.Block{}, m.Content[:j]...)
			}
			more, err := at.blocks(ctx, sessionID, images, *b.Attachment, copied)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, more...)
		}
		if blocks == nil {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append([]core.Message{}, msgs[:i]...)
		}
		out = append(out, core.Message{Role: m.Role, Content: blocks})
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

// blocks is what one attachment becomes.
func (at *Attachments) blocks(ctx context.Context, sessionID string, images bool, a core.Attachment, copied map[string]string) ([]core.Block, error) {
	label := attachmentLabel(a)
	note := func(format string, args ...any) []core.Block {
		return []core.Block{{Type: core.BlockText, Text: label + ": " + fmt.Sprintf(format, args...) + "]"}}
	}
	switch {
	case a.Skipped != "":
		return note("not read, %s", a.Skipped), nil
	case a.ID == "" || at.Store == nil:
		return note("not available here"), nil
	}
	data, err := at.Store.GetAttachment(ctx, a.ID)
	if err != nil {
		return note("its content could not be read (%v)", err), nil
	}
	switch {
	case a.Kind == core.AttachmentImage && images && len(data) <= MaxImageBytes:
		return []core.Block{{Type: core.BlockText, Text: label + "]"}, {Type: core.BlockImage, MediaType: a.MediaType, Data: data}}, nil
	case a.Kind == core.AttachmentText && utf8.Valid(data):
		text := label + "]\n" + string(data)
		if len(data) > MaxInlineText {
			cut := MaxInlineText
			for cut > 0 && !utf8.RuneStart(data[cut]) {
				cut--
			}
			where := at.place(ctx, sessionID, a, data, copied)
			text = fmt.Sprintf("%s; its first %s follow, the whole file %s]\n%s", label, core.FormatBytes(int64(cut)), where, data[:cut])
		}
		return []core.Block{{Type: core.BlockText, Text: text}}, nil
	}
	where := at.place(ctx, sessionID, a, data, copied)
	switch {
	case a.Kind == core.AttachmentImage && images:
		return note("too large to be given as an image (over %s); the image %s", core.FormatBytes(MaxImageBytes), where), nil
	case a.Kind == core.AttachmentImage:
		return note("this model is not given images; the image %s", where), nil
	}
	return note("%s", where), nil
}

// place copies a file into the sandbox once per turn and says where it
// is, or why it is not there.
func (at *Attachments) place(ctx context.Context, sessionID string, a core.Attachment, data []byte, copied map[string]string) string {
	if where, ok := copied[a.ID]; ok {
		return where
	}
	where := "is not available to you: this gateway runs no sandbox"
	if at.Sandbox != nil {
		if path, err := at.Put(ctx, sessionID, a, data); err != nil {
			where = fmt.Sprintf("could not be put in the sandbox (%v)", err)
		} else {
			where = "is in the sandbox at " + path
		}
	}
	copied[a.ID] = where
	return where
}

// Put writes an attachment's bytes into the session's sandbox and
// returns where (core.Attachment.SandboxPath).
func (at *Attachments) Put(ctx context.Context, sessionID string, a core.Attachment, data []byte) (string, error) {
	if at.Sandbox == nil {
		return "", core.ErrSandboxUnavailable
	}
	path := a.SandboxPath()
	res, err := at.Sandbox.Exec(ctx, sessionID, core.ExecRequest{
		Cmd: []string{`mkdir -p "$(dirname "$1")" && cat > "$1"`, path}, Shell: true, Stdin: data})
	switch {
	case err != nil:
		return "", err
	case res.ExitCode != 0:
		return "", fmt.Errorf("%s", res.Stderr)
	}
	return path, nil
}
