package slack

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/providers"
)

// descriptor is what the rest of the gateway knows of Slack.
func descriptor() providers.Platform {
	return providers.Platform{
		Name: Name, Label: "Slack", Thread: "Slack thread",
		Key:             regexp.MustCompile(`^slack:[A-Z0-9]{2,20}:[A-Z0-9]{2,20}:[0-9]{1,12}\.[0-9]{1,8}$`),
		KeyForm:         "slack:<team>:<channel>:<thread ts>",
		SettingPrefixes: []string{"SLACK_"},
		Docs:            "docs/slack.md",
		Setup:           "Slack is off. Create the Slack app from its manifest (switchboard slack manifest prints it), then set SLACK_SIGNING_SECRET with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (any number of workspaces) and restart the gateway.",
		NoInstall:       "Slack serves one workspace with SLACK_BOT_TOKEN, so there is nothing to install. To serve several, set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET instead and restart the gateway.",
		KeyURL:          threadURL,
	}
}

// threadURL is the address of the thread an origin key names,
// slack:<team>:<channel>:<thread ts>.
func threadURL(key string) string {
	parts := strings.Split(key, ":")
	if len(parts) != 4 || parts[0] != Name || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return ""
	}
	team, channel, ts := url.PathEscape(parts[1]), url.PathEscape(parts[2]), url.PathEscape(parts[3])
	return "https://app.slack.com/client/" + team + "/" + channel + "/thread/" + channel + "-" + ts
}
