package github

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestGitGrant: a GitHub session's sandbox is granted the git host with a
// credential id the provider recognizes; other sessions get nothing.
func TestGitGrant(t *testing.T) {
	w := newToolsWorld(t)
	tests := []struct {
		name string
		s    *core.Session
		ok   bool
	}{
		{"a pull request's session", toolsSession("sesn_pr", "github:"+toolsRepo+"#7"), true},
		{"another platform's session", &core.Session{ID: "sesn_slack", Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1.2", TenantID: "T1"}}, false},
		{"an API session", &core.Session{ID: "sesn_api"}, false},
		{"a malformed key", toolsSession("sesn_bad", "github:nothing"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts, id, ok := w.p.GitGrant(tt.s)
			if ok != tt.ok {
				t.Fatalf("GitGrant ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if !slices.Equal(hosts, []string{"github.com:443"}) {
				t.Errorf("hosts = %q, want the git host", hosts)
			}
			if !w.p.IsGitCredential(id) {
				t.Errorf("IsGitCredential(%q) = false for the id GitGrant made", id)
			}
		})
	}
	if w.p.IsGitCredential("cred_01vault") {
		t.Error("a vault id is taken for a git credential")
	}
}

// TestGitHeader: the header is the installation's token as git's basic
// credential, for the git host only.
func TestGitHeader(t *testing.T) {
	w := newToolsWorld(t)
	_, id, ok := w.p.GitGrant(toolsSession("sesn_pr", "github:"+toolsRepo+"#7"))
	if !ok {
		t.Fatal("no grant for a GitHub session")
	}
	name, value, err := w.p.GitHeader(t.Context(), id, "github.com:443")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(value, "Basic "))
	if name != "Authorization" || err != nil || !strings.HasPrefix(string(raw), "x-access-token:ghs_") {
		t.Errorf("header %s: %s (%s), want the installation token as basic credential", name, value, raw)
	}
	if _, _, err := w.p.GitHeader(t.Context(), id, "example.com:443"); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("another host: err = %v, want ErrForbidden", err)
	}
	if _, _, err := w.p.GitHeader(t.Context(), "github-git:nonsense", "github.com:443"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("a malformed id: err = %v, want ErrNotFound", err)
	}
}
