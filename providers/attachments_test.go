package providers

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// fileHost fetches every pending attachment as att_<tenant>_<file id>,
// and records the tenants it was asked for.
type fileHost struct {
	named
	asked *[]string
}

func (h fileHost) FetchAttachments(_ context.Context, tenant string, atts []core.Attachment) ([]core.Attachment, error) {
	*h.asked = append(*h.asked, h.Name()+":"+tenant)
	out := slices.Clone(atts)
	for i, a := range out {
		if !a.Pending() || a.Source.Tenant != tenant {
			return nil, core.ErrInvalid // given what is not its tenant's to fetch
		}
		out[i].ID = "att_" + tenant + "_" + a.Source.FileID
	}
	return out, nil
}

// TestSetFetchAttachments: pending attachments are fetched through the
// provider they came from, a tenant at a time, and come back in their
// order; kept or skipped ones are not asked for; one of a provider the
// gateway does not run is skipped with a note.
func TestSetFetchAttachments(t *testing.T) {
	var asked []string
	s := &Set{list: []Provider{named("github"), fileHost{named("slack"), &asked}}}
	file := func(provider, tenant, id string) core.Attachment {
		return core.Attachment{Name: id, Source: &core.AttachmentSource{Provider: provider, Tenant: tenant, FileID: id, URL: "https://files.example/" + id}}
	}
	kept := file("slack", "T1", "F0")
	kept.ID = "att_kept"
	skipped := file("slack", "T1", "F9")
	skipped.Skipped = "over the limit"
	atts := []core.Attachment{file("slack", "T1", "F1"), kept, file("slack", "T2", "F2"), skipped, file("linear", "O1", "L1"), file("slack", "T1", "F3")}
	got, err := s.FetchAttachments(t.Context(), atts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"att_T1_F1", "att_kept", "att_T2_F2", "", "", "att_T1_F3"}
	for i, w := range want {
		if got[i].ID != w || got[i].Name != atts[i].Name {
			t.Errorf("attachment %d: %+v, want id %q", i, got[i], w)
		}
	}
	if got[3].Skipped != "over the limit" || !strings.Contains(got[4].Skipped, "no longer serves linear") {
		t.Errorf("skipped: %q, %q", got[3].Skipped, got[4].Skipped)
	}
	if !slices.Equal(asked, []string{"slack:T1", "slack:T2"}) {
		t.Errorf("asked %v, want slack:T1 then slack:T2, once each", asked)
	}
}
