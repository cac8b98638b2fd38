package providers

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

type named string

func (n named) Name() string { return string(n) }

// repoProvider names one repository for every session.
type repoProvider struct{ named }

func (p repoProvider) Repository(_ context.Context, s *core.Session) (*core.Repository, error) {
	return &core.Repository{FullName: "acme/" + s.ID}, nil
}

// TestSetRepository: the session's origin provider names its repository
// when it is a RepositorySource; other sessions have none.
func TestSetRepository(t *testing.T) {
	s := &Set{list: []Provider{named("slack"), repoProvider{named("github")}}}
	for _, tc := range []struct {
		name   string
		origin *core.Origin
		want   string
	}{
		{"from a repository source", &core.Origin{Provider: "github"}, "acme/ses_1"},
		{"from another provider", &core.Origin{Provider: "slack"}, ""},
		{"from a provider not in the set", &core.Origin{Provider: "linear"}, ""},
		{"an API session", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Repository(t.Context(), &core.Session{ID: "ses_1", Origin: tc.origin})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if r != nil {
				got = r.FullName
			}
			if got != tc.want {
				t.Fatalf("repository %q, want %q", got, tc.want)
			}
		})
	}
}
