package harness_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// attachmentFiles holds attachments' bytes by id.
type attachmentFiles map[string][]byte

func (f attachmentFiles) GetAttachment(_ context.Context, id string) ([]byte, error) {
	if d, ok := f[id]; ok {
		return d, nil
	}
	return nil, core.ErrNotFound
}

// copySandbox records the files written into it; down makes it fail.
type copySandbox struct {
	mu    sync.Mutex
	files map[string][]byte
	down  bool
}

func (s *copySandbox) Exec(_ context.Context, _ string, req core.ExecRequest) (*core.ExecResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, core.ErrSandboxUnavailable
	}
	if !req.Shell || len(req.Cmd) != 2 || !strings.Contains(req.Cmd[0], `cat > "$1"`) {
		return &core.ExecResult{ExitCode: 2, Stderr: []byte("unexpected command")}, nil
	}
	if s.files == nil {
		s.files = map[string][]byte{}
	}
	s.files[req.Cmd[1]] = req.Stdin
	return &core.ExecResult{}, nil
}

// TestAttachmentsReachTheModel: the attachments of a message reach the
// model by kind: an image as image content for a model that takes images
// (else a note and the file in the sandbox), a text file inline (a long
// one cut, whole in the sandbox), another file in the sandbox, a skipped
// one as a note saying why; without a sandbox, a note says so.
func TestAttachmentsReachTheModel(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nimage bytes")
	long := strings.Repeat("x", harness.MaxInlineText+10)
	huge := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, harness.MaxImageBytes)...)
	files := attachmentFiles{"att_01img001": png, "att_01txt002": []byte("line one\n"), "att_01big003": []byte(long), "att_01pdf004": []byte("%PDF-1.7"), "att_01hug005": huge}
	atts := []core.Attachment{
		{ID: "att_01img001", Name: "shot.png", MediaType: "image/png", Kind: core.AttachmentImage, Size: int64(len(png))},
		{ID: "att_01txt002", Name: "notes.txt", MediaType: "text/plain", Kind: core.AttachmentText, Size: 9},
		{ID: "att_01big003", Name: "big.log", MediaType: "text/plain", Kind: core.AttachmentText, Size: int64(len(long))},
		{ID: "att_01pdf004", Name: "spec.pdf", MediaType: "application/pdf", Kind: core.AttachmentFile, Size: 8},
		{Name: "huge.zip", Kind: core.AttachmentFile, Size: 25 << 20, Skipped: "25 MiB, over the 10 MiB limit"},
		{ID: "att_01hug005", Name: "scan.png", MediaType: "image/png", Kind: core.AttachmentImage, Size: int64(len(huge))},
	}
	request := func(t *testing.T, images bool, sb core.Sandbox) (string, []core.Block) {
		t.Helper()
		e := newEnv(t, fakemodel.Step{Text: "seen"})
		e.cycle.Attachments, e.cycle.Images = &harness.Attachments{Store: files, Sandbox: sb}, images
		e.log.queue(core.TypeUserMessage, core.MessageBody{Text: "look at these", Attachments: atts})
		e.run(t, t.Context())
		blocks := e.model.Requests()[0].Messages[0].Content
		var text strings.Builder
		for _, b := range blocks {
			text.WriteString(b.Text + "\n")
		}
		return text.String(), blocks
	}

	t.Run("a model that takes images", func(t *testing.T) {
		sb := &copySandbox{}
		text, blocks := request(t, true, sb)
		var images []core.Block
		for _, b := range blocks {
			if b.Type == core.BlockImage {
				images = append(images, b)
			}
			if b.Attachment != nil {
				t.Fatalf("an attachment block reached the model unread: %+v", b)
			}
		}
		if len(images) != 1 || images[0].MediaType != "image/png" || string(images[0].Data) != string(png) {
			t.Fatalf("image blocks %+v", images)
		}
		for _, want := range []string{
			"look at these", "[Attached image shot.png (",
			"[Attached file notes.txt (9 B)]\nline one\n",
			"[Attached file big.log (64 KiB); its first 64 KiB follow, the whole file is in the sandbox at /workspace/attachments/big003-big.log]\nxxx",
			"[Attached file spec.pdf (8 B): is in the sandbox at /workspace/attachments/pdf004-spec.pdf]",
			"[Attached file huge.zip (25 MiB): not read, 25 MiB, over the 10 MiB limit]",
			"[Attached image scan.png (5.0 MiB): too large to be given as an image (over 5.0 MiB); the image is in the sandbox at /workspace/attachments/hug005-scan.png]",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the request lacks %q:\n%.600s", want, text)
			}
		}
		if string(sb.files["/workspace/attachments/pdf004-spec.pdf"]) != "%PDF-1.7" || string(sb.files["/workspace/attachments/big003-big.log"]) != long {
			t.Errorf("sandbox files %v", keys(sb.files))
		}
		if _, ok := sb.files["/workspace/attachments/img001-shot.png"]; ok {
			t.Error("an image the model sees went to the sandbox too")
		}
	})
	t.Run("a model without images", func(t *testing.T) {
		sb := &copySandbox{}
		text, blocks := request(t, false, sb)
		for _, b := range blocks {
			if b.Type == core.BlockImage {
				t.Fatal("an image went to a model that does not take images")
			}
		}
		if !strings.Contains(text, "this model is not given images; the image is in the sandbox at /workspace/attachments/img001-shot.png]") {
			t.Errorf("the request says %.600s", text)
		}
		if string(sb.files["/workspace/attachments/img001-shot.png"]) != string(png) {
			t.Errorf("sandbox files %v", keys(sb.files))
		}
	})
	t.Run("no sandbox", func(t *testing.T) {
		text, _ := request(t, true, nil)
		if !strings.Contains(text, "[Attached file spec.pdf (8 B): is not available to you: this gateway runs no sandbox]") {
			t.Errorf("the request says %.600s", text)
		}
	})
	t.Run("a sandbox that fails", func(t *testing.T) {
		text, _ := request(t, true, &copySandbox{down: true})
		if !strings.Contains(text, "spec.pdf (8 B): could not be put in the sandbox ("+core.ErrSandboxUnavailable.Error()+")") {
			t.Errorf("the request says %.600s", text)
		}
	})
	t.Run("no store", func(t *testing.T) {
		e := newEnv(t, fakemodel.Step{Text: "seen"})
		e.log.queue(core.TypeUserMessage, core.MessageBody{Text: "look", Attachments: atts[:1]})
		e.run(t, t.Context())
		if got := e.model.Requests()[0].Messages[0].Content; len(got) != 2 || got[1].Type != core.BlockText || !strings.Contains(got[1].Text, "shot.png") {
			t.Fatalf("blocks %+v", got)
		}
	})
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
