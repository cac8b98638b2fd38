package providers

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// keyedProvider names an installation for every key it is asked about:
// the key's second field.
type keyedProvider struct {
	named
	installs map[string]*core.Installation
}

func (p keyedProvider) InstallationOfKey(_ context.Context, key string) (*core.Installation, error) {
	parts := strings.Split(key, ":")
	org := strings.Split(parts[1], "/")[0]
	if in, ok := p.installs[org]; ok {
		return in, nil
	}
	return nil, core.ErrNotFound
}

// TestCheckLink: a link within an installation, or between installations
// of one tenant group, is allowed; any other is forbidden with a message
// naming both; a key no installation serves is invalid. API sessions
// may be linked anywhere the gateway serves.
func TestCheckLink(t *testing.T) {
	slackT1 := &core.Installation{ID: "ins_s1", Provider: "slack", ExternalID: "T1", Name: "acme"}
	slackT2 := &core.Installation{ID: "ins_s2", Provider: "slack", ExternalID: "T2", Name: "globex"}
	linear := &core.Installation{ID: "ins_l1", Provider: "linear", ExternalID: "org1"}
	gh := &core.Installation{ID: "ins_g1", Provider: "github", ExternalID: "99", Name: "acme"}
	// Grammars loose enough for the cases: each platform's own is tested
	// in its package.
	loose := Platforms{{Name: "slack", Key: regexp.MustCompile(`^slack:.+$`)}, {Name: "linear", Key: regexp.MustCompile(`^linear:.+$`)},
		{Name: "github", Key: regexp.MustCompile(`^github:.+#[0-9]+$`), KeyForm: "github:<owner>/<repo>#<n>"}}
	s := &Set{platforms: loose, list: []Provider{
		keyedProvider{named("slack"), map[string]*core.Installation{"T1": slackT1, "T2": slackT2}},
		keyedProvider{named("linear"), map[string]*core.Installation{"org1": linear}},
		keyedProvider{named("github"), map[string]*core.Installation{"acme": gh}},
	}}
	fromLinear := &core.Session{ID: "ses_1", Origin: &core.Origin{Provider: "linear", Key: "linear:org1:as-1"}}
	fromSlack := &core.Session{ID: "ses_2", Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1.2"}}
	for _, tt := range []struct {
		name  string
		sess  *core.Session
		key   string
		group bool
		want  error
	}{
		{"the same installation", fromSlack, "slack:T1:C9:3.4", false, nil},
		{"another installation", fromLinear, "github:acme/app#7", false, core.ErrForbidden},
		{"one tenant group", fromLinear, "github:acme/app#7", true, nil},
		{"another customer, grouped apart", fromSlack, "slack:T2:C1:1.2", true, core.ErrForbidden},
		{"a key nothing serves", fromSlack, "github:nobody/app#1", false, core.ErrInvalid},
		{"an API session", &core.Session{ID: "ses_3"}, "github:acme/app#7", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, in := range []*core.Installation{slackT1, linear, gh} {
				in.TenantGroup = ""
				if tt.group {
					in.TenantGroup = "acme"
				}
			}
			slackT2.TenantGroup = "globex"
			err := s.CheckLink(t.Context(), tt.sess, tt.key)
			if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
				t.Fatalf("CheckLink = %v, want %v", err, tt.want)
			}
			if errors.Is(err, core.ErrForbidden) && !strings.Contains(err.Error(), "not in a tenant group") {
				t.Fatalf("the refusal says %q", err)
			}
		})
	}
}
