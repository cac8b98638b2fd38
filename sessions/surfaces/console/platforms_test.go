package console_test

import (
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// shipped are the platforms as the gateway's wiring describes them to
// the console (each platform's package declares its own): served and
// install say which are served and which of those have an install flow.
func shipped(served map[string]bool) []console.Platform {
	list := []console.Platform{
		{Name: "slack", Label: "Slack", Thread: "Slack thread", Docs: "docs/slack.md",
			Setup:     "Slack is off. Create the Slack app, then set SLACK_SIGNING_SECRET with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.",
			NoInstall: "Slack serves one workspace with SLACK_BOT_TOKEN, so there is nothing to install.",
			KeyURL: func(key string) string {
				parts := strings.Split(key, ":")
				if len(parts) != 4 {
					return ""
				}
				return "https://app.slack.com/client/" + parts[1] + "/" + parts[2] + "/thread/" + parts[2] + "-" + parts[3]
			}},
		{Name: "github", Label: "GitHub", Thread: "GitHub issue or pull request", Docs: "docs/github.md",
			Setup: "GitHub is off. Set GITHUB_APP_ID.", NoInstall: "The gateway has no GitHub App yet.",
			SetupFlow: "oauth/github/manifest", SetupFlowText: "Create the GitHub App",
			KeyURL: func(key string) string {
				repo, num, _ := strings.Cut(strings.TrimPrefix(key, "github:"), "#")
				owner, name, _ := strings.Cut(repo, "/")
				return "https://github.com/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/issues/" + num
			},
			Health: func(in *core.Installation) (string, bool, bool) {
				if in.Metadata["status"] == "suspended" {
					return "Suspended on GitHub: its events are ignored until it is unsuspended.", false, true
				}
				return "Active", true, true
			}},
		{Name: "linear", Label: "Linear", Thread: "Linear issue", Docs: "docs/linear.md",
			Setup: "Linear is off. Set LINEAR_CLIENT_ID, LINEAR_CLIENT_SECRET and LINEAR_WEBHOOK_SECRET."},
	}
	for i, p := range list {
		install, ok := served[p.Name]
		list[i].Served, list[i].Install = ok, install
	}
	return list
}
