package acpclient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// attachmentBytes is an attachment store of fixed files.
type attachmentBytes map[string][]byte

func (a attachmentBytes) GetAttachment(_ context.Context, id string) ([]byte, error) {
	if b, ok := a[id]; ok {
		return b, nil
	}
	return nil, errors.New("no such attachment")
}

// fetchInto fetches pending attachments into a store, as att_<file id>.
type fetchInto attachmentBytes

func (f fetchInto) FetchAttachments(_ context.Context, atts []core.Attachment) ([]core.Attachment, error) {
	out := slices.Clone(atts)
	for i, a := range out {
		if a.Pending() {
			out[i].ID = "att_" + a.Source.FileID
			f[out[i].ID] = []byte("fetched " + a.Name)
		}
	}
	return out, nil
}

// TestAttachmentsInThePrompt: a message's files reach the agent as links
// to their copies in the sandbox's workspace (one recorded pending is
// fetched first), an image as a link too for an agent that takes no
// images, and a file that could not be kept as a note saying why.
func TestAttachmentsInThePrompt(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{Say: "Read them."}}}}})
	store := attachmentBytes{"att_01": []byte("col1,col2\n"), "att_02": {0x89, 'P', 'N', 'G'}}
	e.attach = &harness.Attachments{Store: store, Sandbox: e.sb, Fetcher: fetchInto(store)}
	files := []core.Attachment{
		{ID: "att_01", Name: "data.csv", MediaType: "text/csv", Size: 10, Kind: core.AttachmentText},
		{ID: "att_02", Name: "chart.png", MediaType: "image/png", Size: 4, Kind: core.AttachmentImage},
		{Name: "huge.zip", Size: 1 << 30, Kind: core.AttachmentFile, Skipped: "over the 10 MiB limit"},
		{Name: "late.txt", Size: 12, Kind: core.AttachmentText, Source: &core.AttachmentSource{Provider: "chat", Tenant: "T1", FileID: "03", URL: "https://files.chat.example/03"}},
	}
	e.send(core.TypeUserMessage, core.MessageBody{Text: "look at these", Attachments: files})
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	prompt := e.asked("session/prompt")[0]["text"].(string)
	for _, a := range files[:2] {
		if !strings.Contains(prompt, "[link "+a.Name+" file://"+a.SandboxPath()+"]") {
			t.Fatalf("no link to %s in the prompt:\n%s", a.Name, prompt)
		}
		if string(e.sb.files[a.SandboxPath()]) != map[string]string{"att_01": "col1,col2\n", "att_02": "\x89PNG"}[a.ID] {
			t.Fatalf("%s in the sandbox: %q", a.Name, e.sb.files[a.SandboxPath()])
		}
	}
	if !strings.Contains(prompt, "[Attached huge.zip: not read, over the 10 MiB limit]") {
		t.Fatalf("no note of the skipped file:\n%s", prompt)
	}
	late := files[3]
	late.ID = "att_03"
	if !strings.Contains(prompt, "[link late.txt file://"+late.SandboxPath()+"]") || string(e.sb.files[late.SandboxPath()]) != "fetched late.txt" {
		t.Fatalf("the file recorded pending: %q in the sandbox; the prompt:\n%s", e.sb.files[late.SandboxPath()], prompt)
	}
}
