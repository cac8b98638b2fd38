package gitlab

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

func TestKeys(t *testing.T) {
	for _, tt := range []struct {
		name, key, project, kind string
		iid                      int64
		url                      string
	}{
		{"an issue", "gitlab:acme/app#7", "acme/app", kindIssue, 7, "https://gitlab.com/acme/app/-/issues/7"},
		{"a merge request", "gitlab:acme/app!12", "acme/app", kindMR, 12, "https://gitlab.com/acme/app/-/merge_requests/12"},
		{"nested groups", "gitlab:acme/platform/infra/deploy!3", "acme/platform/infra/deploy", kindMR, 3, "https://gitlab.com/acme/platform/infra/deploy/-/merge_requests/3"},
		{"dots and dashes", "gitlab:my.group/sub-group/app_v2#1", "my.group/sub-group/app_v2", kindIssue, 1, "https://gitlab.com/my.group/sub-group/app_v2/-/issues/1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionKey(tt.project, tt.kind, tt.iid); got != tt.key {
				t.Errorf("sessionKey = %q, want %q", got, tt.key)
			}
			project, kind, iid, err := parseKey(tt.key)
			if err != nil || project != tt.project || kind != tt.kind || iid != tt.iid {
				t.Errorf("parseKey(%q) = %q %q %d %v", tt.key, project, kind, iid, err)
			}
			if got := keyURL(DefaultURL, tt.key); got != tt.url {
				t.Errorf("keyURL = %q, want %q", got, tt.url)
			}
			u, _ := url.Parse(tt.url)
			p := &Provider{cfg: Config{URL: DefaultURL}}
			if got, ok, err := p.KeyOfURL(t.Context(), u); err != nil || !ok || got != tt.key {
				t.Errorf("KeyOfURL(%s) = %q %v %v, want %q", tt.url, got, ok, err, tt.key)
			}
			if _, err := (providers.Platforms{descriptor()}).CheckKey(tt.key); err != nil {
				t.Errorf("the platform's grammar refuses %q: %v", tt.key, err)
			}
		})
	}
}

func TestBadKeys(t *testing.T) {
	ps := providers.Platforms{descriptor()}
	for _, tt := range []struct{ name, key string }{
		{"no project path", "gitlab:app#7"},
		{"no number", "gitlab:acme/app#"},
		{"zero", "gitlab:acme/app!0"},
		{"leading zero", "gitlab:acme/app#07"},
		{"both kinds", "gitlab:acme/app#7!8"},
		{"a space", "gitlab:acme/my app#7"},
		{"an empty group", "gitlab:acme//app#7"},
		{"a trailing slash", "gitlab:acme/app/#7"},
		{"another platform", "github:acme/app#7"},
		{"a GitHub pull request form", "gitlab:acme/app/pull/7"},
		{"too long a number", "gitlab:acme/app#12345678901"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, _, err := parseKey(tt.key); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("parseKey(%q) = %v, want ErrInvalid", tt.key, err)
			}
			if keyURL(DefaultURL, tt.key) != "" {
				t.Errorf("keyURL(%q) built an address", tt.key)
			}
			if _, err := ps.CheckKey(tt.key); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("CheckKey(%q) = %v, want ErrInvalid", tt.key, err)
			}
		})
	}
	// The error says what a key looks like.
	_, err := ps.CheckKey("gitlab:app#7")
	if want := "gitlab:<group/project>#<issue> or gitlab:<group/project>!<merge request>"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckKey's error %v does not show %q", err, want)
	}
}

func TestKeyOfURL(t *testing.T) {
	self := &Provider{cfg: Config{URL: "https://git.example.internal/gitlab"}}
	com := &Provider{cfg: Config{URL: DefaultURL}}
	for _, tt := range []struct {
		name string
		p    *Provider
		raw  string
		want string
	}{
		{"a merge request's diff tab", com, "https://gitlab.com/acme/app/-/merge_requests/7/diffs", "gitlab:acme/app!7"},
		{"a note's anchor", com, "https://gitlab.com/acme/app/-/issues/12#note_99", "gitlab:acme/app#12"},
		{"upper-case host", com, "https://GitLab.com/a/b/c/-/issues/1", "gitlab:a/b/c#1"},
		{"a self-managed instance under a path", self, "https://git.example.internal/gitlab/ops/infra/-/merge_requests/4", "gitlab:ops/infra!4"},
		{"another host", com, "https://github.com/acme/app/-/issues/1", ""},
		{"a commit", com, "https://gitlab.com/acme/app/-/commit/abc", ""},
		{"not a number", com, "https://gitlab.com/acme/app/-/issues/x", ""},
		{"no project", com, "https://gitlab.com/-/issues/1", ""},
		{"a project's page", com, "https://gitlab.com/acme/app", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := url.Parse(tt.raw)
			got, ok, err := tt.p.KeyOfURL(t.Context(), u)
			if err != nil || got != tt.want || ok != (tt.want != "") {
				t.Errorf("KeyOfURL(%s) = %q, %v, %v; want %q", tt.raw, got, ok, err, tt.want)
			}
		})
	}
}
