package settings

import (
	"slices"
	"testing"
)

func TestUnknownVariables(t *testing.T) {
	opts := []Option{{Env: "SWITCHBOARD_MODEL"}, {Env: "SWITCHBOARD_ADDR"}, {Env: "SLACK_BOT_TOKEN"}, {Env: "GITHUB_APP_ID"}, {Env: "GITHUB_WEBHOOK_SECRET"}, {Env: "LINEAR_CLIENT_ID"}}
	environ := []string{
		"PATH=/usr/bin", "SWITCHBOARD_MODEL=anthropic/x", "SWITCHBOARD_MODLE=anthropic/x", "SWITCHBOARD_URL=http://x",
		"SLACK_BOT_TOKN=xoxb", "GITHUB_APP_IDD=1", "GITHUB_WEBHOOK_SECRT=s", "GITHUB_SHA=abc", "GITHUB_TOKEN=t",
		"LINEAR_CLIENTID=c", "SWITCHBOARD_TEST_POSTGRES=dsn", "SWITCHBOARD_MODLE=again", "ANTHROPIC_API_KEY=k",
	}
	got := UnknownVariables(environ, []string{"SWITCHBOARD_", "SLACK_", "LINEAR_", "GITHUB_APP_", "GITHUB_WEBHOOK_"}, opts,
		[]string{"SWITCHBOARD_URL"}, []string{"SWITCHBOARD_TEST_"})
	want := []Unknown{
		{"SWITCHBOARD_MODLE", "SWITCHBOARD_MODEL"},
		{"SLACK_BOT_TOKN", "SLACK_BOT_TOKEN"},
		{"GITHUB_APP_IDD", "GITHUB_APP_ID"},
		{"GITHUB_WEBHOOK_SECRT", "GITHUB_WEBHOOK_SECRET"},
		{"LINEAR_CLIENTID", "LINEAR_CLIENT_ID"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("unknown\n got %+v\nwant %+v", got, want)
	}
}
