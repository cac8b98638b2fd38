package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// testAttachments: an attachment's bytes come back as stored, under a new
// id each, with its size set; an empty file is kept; an unknown id is
// ErrNotFound.
func testAttachments(t *testing.T, s core.Store) {
	ctx := t.Context()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<16)...)
	a, err := s.PutAttachment(ctx, core.Attachment{Name: "shot.png", MediaType: "image/png", Kind: core.AttachmentImage}, png)
	must(t, err)
	if !strings.HasPrefix(a.ID, core.PrefixAttachment+"_") || a.Size != int64(len(png)) || a.Name != "shot.png" || a.Kind != core.AttachmentImage {
		t.Fatalf("stored %+v", a)
	}
	b, err := s.PutAttachment(ctx, core.Attachment{Name: "shot.png"}, png)
	must(t, err)
	if b.ID == a.ID {
		t.Fatal("two attachments share an id")
	}
	got, err := s.GetAttachment(ctx, a.ID)
	must(t, err)
	if !bytes.Equal(got, png) {
		t.Fatalf("read back %d bytes, want the %d stored", len(got), len(png))
	}
	empty, err := s.PutAttachment(ctx, core.Attachment{Name: "empty.txt"}, nil)
	must(t, err)
	if got, err := s.GetAttachment(ctx, empty.ID); err != nil || len(got) != 0 || empty.Size != 0 {
		t.Fatalf("an empty file: %q, %v (%+v)", got, err, empty)
	}
	if _, err := s.GetAttachment(ctx, "att_missing"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("an unknown id: %v, want ErrNotFound", err)
	}
}
