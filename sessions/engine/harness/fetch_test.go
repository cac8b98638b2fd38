package harness_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// platformFiles fetches pending attachments into files, as a platform's
// provider does; err makes it fail.
type platformFiles struct {
	mu    sync.Mutex
	files attachmentFiles
	calls int
	err   error
}

func (p *platformFiles) FetchAttachments(_ context.Context, atts []core.Attachment) ([]core.Attachment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.err != nil {
		return nil, p.err
	}
	out := slices.Clone(atts)
	for i, a := range out {
		if a.Pending() {
			out[i].ID = "att_" + a.Source.FileID
			p.files[out[i].ID] = []byte("contents of " + a.Name)
		}
	}
	return out, nil
}

// TestPendingAttachmentsFetchedOnce: a message recorded with its files
// pending gets them downloaded by the first turn that reads it, before
// the model sees them, and logged as fetched; the next turn reads them
// from the log without fetching again. A fetch that fails logs nothing,
// and the next run fetches.
func TestPendingAttachmentsFetchedOnce(t *testing.T) {
	src := &core.AttachmentSource{Provider: "chat", Tenant: "T1", FileID: "F1", URL: "https://files.chat.example/F1"}
	atts := []core.Attachment{
		{Name: "notes.txt", MediaType: "text/plain", Kind: core.AttachmentText, Size: 20, Source: src},
		{Name: "huge.zip", Kind: core.AttachmentFile, Size: 25 << 20, Skipped: "25 MiB, over the 10 MiB limit", Source: src},
	}
	files := &platformFiles{files: attachmentFiles{}, err: errors.New("the platform is down")}
	e := newEnv(t, fakemodel.Step{Text: "seen"}, fakemodel.Step{Text: "still seen"})
	e.cycle.Attachments = &harness.Attachments{Store: files.files, Fetcher: files}
	e.log.queue(core.TypeUserMessage, core.MessageBody{Text: "look at this", Attachments: atts})

	if _, err := e.h.Run(t.Context(), e.cycle); err == nil || !strings.Contains(err.Error(), "the platform is down") {
		t.Fatalf("a failed fetch: %v", err)
	}
	if slices.Contains(e.log.types(), core.TypeAttachmentsFetched) || len(e.model.Requests()) != 0 {
		t.Fatalf("after a failed fetch: %v, %d model requests", e.log.types(), len(e.model.Requests()))
	}

	files.err = nil
	e.run(t, t.Context())
	e.say("and again?")
	e.run(t, t.Context())
	if files.calls != 2 {
		t.Errorf("%d fetches, want 2 (the failed one and one that got the files)", files.calls)
	}
	var fetched []core.AttachmentsFetchedBody
	for _, ev := range e.log.events {
		if ev.Type == core.TypeAttachmentsFetched {
			var b core.AttachmentsFetchedBody
			if err := ev.Decode(&b); err != nil {
				t.Fatal(err)
			}
			fetched = append(fetched, b)
		}
	}
	if len(fetched) != 1 || len(fetched[0].Attachments) != 2 || fetched[0].Attachments[0].ID != "att_F1" || fetched[0].Attachments[1].Skipped == "" {
		t.Fatalf("logged as fetched: %+v", fetched)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	for i, r := range reqs {
		var text strings.Builder
		for _, b := range r.Messages[0].Content {
			text.WriteString(b.Text + "\n")
		}
		for _, want := range []string{"[Attached file notes.txt (20 B)]\ncontents of notes.txt", "[Attached file huge.zip (25 MiB): not read, 25 MiB"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("request %d lacks %q:\n%s", i, want, text.String())
			}
		}
	}
}
