package slack

import (
	"os"
	"strings"
	"testing"
)

// TestManifest keeps manifest.yaml in step with the code: every scope an
// install asks for, every event the rules read and both webhook paths.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile("manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := string(raw)
	var want []string
	for _, s := range DefaultScopes {
		want = append(want, "      - "+s+"\n")
	}
	for _, e := range []string{"app_mention", "app_uninstalled", "message.channels", "message.groups", "message.im", "message.mpim", "reaction_added", "tokens_revoked"} {
		want = append(want, "      - "+e+"\n")
	}
	// The agent surface, commented out until SLACK_AGENT is set.
	want = append(want, "  # agent_view:\n", "      # - "+AgentScope+" # with SLACK_AGENT=true\n", "      # - "+evAgentStopped+" # with SLACK_AGENT=true\n")
	want = append(want, "/webhooks/slack\n", "/webhooks/slack/interactivity\n", "/oauth/slack/callback\n", "is_enabled: true", "socket_mode_enabled: false # true with SLACK_APP_TOKEN")
	for _, w := range want {
		if !strings.Contains(m, w) {
			t.Errorf("manifest.yaml lacks %q", strings.TrimSpace(w))
		}
	}
}
