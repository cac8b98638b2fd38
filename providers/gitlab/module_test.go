package gitlab

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
)

// TestLoadNamesTheVariable: GitLab is off without its settings, and a
// misconfiguration is one error naming the variable to set.
func TestLoadNamesTheVariable(t *testing.T) {
	tests := []struct {
		name string
		set  settings.Values
		want string // "" on, "off" off
	}{
		{"off", settings.Values{}, "off"},
		{"token mode", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_TOKEN": "glpat-x", "SWITCHBOARD_GITLAB_PROJECT": "a/b"}, ""},
		{"OAuth mode", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_CLIENT_ID": "id", "SWITCHBOARD_GITLAB_CLIENT_SECRET": "cs"}, ""},
		{"no secret", settings.Values{"SWITCHBOARD_GITLAB_TOKEN": "glpat-x", "SWITCHBOARD_GITLAB_PROJECT": "a/b"}, "SWITCHBOARD_GITLAB_WEBHOOK_SECRET"},
		{"no credential", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s"}, "SWITCHBOARD_GITLAB_TOKEN"},
		{"no project", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_TOKEN": "glpat-x"}, "SWITCHBOARD_GITLAB_PROJECT"},
		{"no client secret", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_CLIENT_ID": "id"}, "SWITCHBOARD_GITLAB_CLIENT_SECRET"},
		{"a bad signing token", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_TOKEN": "glpat-x", "SWITCHBOARD_GITLAB_PROJECT": "a/b",
			"SWITCHBOARD_GITLAB_SIGNING_TOKEN": "whsec_not base64!"}, "SWITCHBOARD_GITLAB_SIGNING_TOKEN"},
		{"a bad URL", settings.Values{"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": "s", "SWITCHBOARD_GITLAB_TOKEN": "glpat-x", "SWITCHBOARD_GITLAB_PROJECT": "a/b",
			"SWITCHBOARD_GITLAB_URL": "gitlab.example.com"}, "SWITCHBOARD_GITLAB_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals := settings.Values{"SWITCHBOARD_GITLAB_URL": DefaultURL, "SWITCHBOARD_GITLAB_MEMBER_CACHE_SECONDS": "60"}
			for k, v := range tc.set {
				vals[k] = v
			}
			build, err := load(vals, providers.LoadEnv{})
			switch tc.want {
			case "off":
				if build != nil || err != nil {
					t.Fatalf("on (%v) without settings", err)
				}
			case "":
				if build == nil || err != nil {
					t.Fatalf("off: %v", err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one naming %s", err, tc.want)
				}
			}
		})
	}
}
