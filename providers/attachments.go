package providers

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/attach"
)

var _ core.AttachmentFetcher = (*Set)(nil)

// FetchAttachments fetches pending attachments through the providers
// they came from (FileHost), a tenant at a time. One of a platform the
// gateway no longer runs is skipped with a note.
func (s *Set) FetchAttachments(ctx context.Context, atts []core.Attachment) ([]core.Attachment, error) {
	type tenant struct{ provider, id string }
	var tenants []tenant
	of := map[tenant][]int{}
	for i, a := range atts {
		if !a.Pending() {
			continue
		}
		t := tenant{a.Source.Provider, a.Source.Tenant}
		if of[t] == nil {
			tenants = append(tenants, t)
		}
		of[t] = append(of[t], i)
	}
	out := slices.Clone(atts)
	for _, t := range tenants {
		pending := make([]core.Attachment, 0, len(of[t]))
		for _, i := range of[t] {
			pending = append(pending, atts[i])
		}
		got, err := s.fetchOf(ctx, t.provider, t.id, pending)
		if err != nil {
			return nil, err
		}
		for j, i := range of[t] {
			out[i] = got[j]
		}
	}
	return out, nil
}

// fetchOf fetches the pending attachments of one tenant of a provider.
func (s *Set) fetchOf(ctx context.Context, provider, tenant string, pending []core.Attachment) ([]core.Attachment, error) {
	for _, p := range s.list {
		h, ok := p.(FileHost)
		if !ok || p.Name() != provider {
			continue
		}
		got, err := h.FetchAttachments(ctx, tenant, pending)
		if err == nil && len(got) != len(pending) {
			err = fmt.Errorf("%s fetched %d attachments of %d", provider, len(got), len(pending))
		}
		return got, err
	}
	return attach.Skip(pending, "this gateway no longer serves "+provider), nil
}
