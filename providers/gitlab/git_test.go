package gitlab

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestGitCredential: a GitLab session's sandbox reaches the instance's
// host, and the egress proxy injects the installation's token there as
// the basic credential GitLab takes for HTTPS git; nowhere else.
func TestGitCredential(t *testing.T) {
	w := newToolsWorld(t)
	s := &core.Session{ID: "ses_git", Origin: &core.Origin{Provider: Name, Key: "gitlab:" + toolsProject + "!7"}}
	hosts, cred, ok := w.p.GitGrant(s)
	if !ok || len(hosts) != 1 || hosts[0] != w.p.gitHostPort() || !w.p.IsGitCredential(cred) {
		t.Fatalf("grant %v %q %v", hosts, cred, ok)
	}
	name, value, err := w.p.GitHeader(t.Context(), cred, hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("oauth2:"+toolsToken)); name != "Authorization" || value != want {
		t.Fatalf("header %s: %s", name, value)
	}
	if _, _, err := w.p.GitHeader(t.Context(), cred, "evil.example:443"); !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("another host: %v", err)
	}
	if _, _, err := w.p.GitHeader(t.Context(), "vault-cred", hosts[0]); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a vault id: %v", err)
	}
	if _, _, err := w.p.GitHeader(t.Context(), gitCredentialPrefix+"acme/another", hosts[0]); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a project the token does not serve: %v", err)
	}
	for _, other := range []*core.Session{{ID: "ses_api"}, {ID: "ses_gh", Origin: &core.Origin{Provider: "github", Key: "github:acme/app#1"}}} {
		if _, _, ok := w.p.GitGrant(other); ok {
			t.Errorf("%s was granted git", other.ID)
		}
	}
}

// TestGitCredentialOAuth: with an OAuth installation the header carries
// its access token, renewed when it expires.
func TestGitCredentialOAuth(t *testing.T) {
	w := newOAuthWorld(t)
	in := w.install(t)
	ts, err := w.p.own.tokens.Get(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	_, value, err := w.p.GitHeader(t.Context(), gitCredentialPrefix+"acme/app", w.p.gitHostPort())
	if err != nil {
		t.Fatal(err)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("oauth2:"+ts.AccessToken)); value != want {
		t.Fatalf("header %s, want the installation's access token", value)
	}
}
