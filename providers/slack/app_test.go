package slack

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers/providertest"
)

// TestManifestHasTheDocumentedFields: the manifest, over HTTP and in
// Socket Mode, as an agent or not, has only fields Slack's manifest
// reference lists, the required ones among them, and each part of the
// app the gateway needs.
func TestManifestHasTheDocumentedFields(t *testing.T) {
	for _, tc := range []struct {
		name          string
		socket, agent bool
		want          []string
	}{
		{"http", false, false, []string{"settings.event_subscriptions.request_url", "settings.interactivity.request_url", "oauth_config.redirect_urls"}},
		{"socket mode", true, false, nil},
		{"agent", false, true, []string{"features.agent_view.agent_description"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewManifest("https://x.example", tc.socket, tc.agent, []string{"search:read"})
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"_metadata.major_version", "display_information.name", "display_information.description",
				"features.bot_user.display_name", "features.app_home.messages_tab_enabled", "oauth_config.scopes.bot", "oauth_config.scopes.user",
				"settings.event_subscriptions.bot_events", "settings.interactivity.is_enabled", "settings.socket_mode_enabled"}, tc.want...)
			providertest.CheckDocumentedFields(t, m, "testdata/manifest_fields.txt", want...)
			if got := m.Settings.SocketModeEnabled; got != tc.socket {
				t.Errorf("socket_mode_enabled = %v, want %v", got, tc.socket)
			}
			if tc.socket && (m.Settings.EventSubscriptions.RequestURL != "" || m.Settings.Interactivity.RequestURL != "") {
				t.Errorf("Socket Mode's manifest has request URLs: %+v", m.Settings)
			}
		})
	}
}

// TestManifestURLs: the request URLs are the webhooks' and the redirect
// URL the install flow's, under the public URL.
func TestManifestURLs(t *testing.T) {
	m, err := NewManifest("https://x.example", false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		m.Settings.EventSubscriptions.RequestURL:      "https://x.example/webhooks/slack",
		m.Settings.Interactivity.RequestURL:           "https://x.example/webhooks/slack/interactivity",
		strings.Join(m.OAuthConfig.RedirectURLs, " "): "https://x.example/oauth/slack/callback",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if _, err := NewManifest("", false, false, nil); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("no public URL: err = %v, want one naming --public-url", err)
	}
}

// TestManifestIsWhatTheProviderUses: one source for the scopes and the
// events. The manifest's bot scopes are exactly those the install asks
// for, and its bot events exactly those whose inner events the intake
// acts on (the package's ev* constants), with the agent setting and
// without.
func TestManifestIsWhatTheProviderUses(t *testing.T) {
	// The ev* constants are the inner event types the intake acts on.
	handled := sorted(providertest.StringConstants(t, "decode.go", "ev"))
	for _, agent := range []bool{false, true} {
		t.Run("agent="+strconv.FormatBool(agent), func(t *testing.T) {
			m, err := NewManifest("https://x.example", false, agent, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(Config{SigningSecret: "s", ClientID: "c", ClientSecret: "cs", Agent: agent})
			if err != nil {
				t.Fatal(err)
			}
			authorize, err := url.Parse(p.Installer().AuthorizeURL("state", "https://x.example/oauth/slack/callback"))
			if err != nil {
				t.Fatal(err)
			}
			asked := strings.Split(authorize.Query().Get("scope"), ",")
			if !slices.Equal(sorted(m.OAuthConfig.Scopes.Bot), sorted(asked)) {
				t.Errorf("manifest scopes %v, the install asks for %v", m.OAuthConfig.Scopes.Bot, asked)
			}
			var inner []string
			for _, ev := range m.Settings.EventSubscriptions.BotEvents {
				i := slices.IndexFunc(subscriptions, func(s subscription) bool { return s.event == ev })
				if i < 0 {
					t.Fatalf("bot event %s has no inner event the intake reads", ev)
				}
				inner = append(inner, subscriptions[i].inner)
			}
			want := handled
			if !agent {
				want = slices.DeleteFunc(slices.Clone(handled), func(e string) bool { return e == evAgentStopped })
			}
			if got := sorted(slices.Compact(sorted(inner))); !slices.Equal(got, want) {
				t.Errorf("the manifest's events are %v, the intake acts on %v", got, want)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestAppSetupSwitchesFollowTheSettings: without flags, Socket Mode
// follows SLACK_APP_TOKEN and the agent SLACK_AGENT; a flag overrides.
func TestAppSetupSwitchesFollowTheSettings(t *testing.T) {
	a := appSetup()
	v := settings.Values{"SLACK_APP_TOKEN": "xapp-1", "SLACK_AGENT": "true"}
	in := a.NewAppInput("https://x.example/", v, nil)
	if !in.Switches[switchSocket] || !in.Switches[switchAgent] || in.PublicURL != "https://x.example" {
		t.Errorf("input = %+v, want both switches on and the URL without its slash", in)
	}
	in = a.NewAppInput("https://x.example", v, map[string]bool{switchSocket: false})
	if in.Switches[switchSocket] {
		t.Error("--socket-mode=false did not turn Socket Mode off")
	}
	got, err := a.App(in)
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Manifest.(Manifest); m.Settings.SocketModeEnabled || m.Features.AgentView == nil {
		t.Errorf("manifest settings %+v, agent view %v", m.Settings, m.Features.AgentView)
	}
}

// TestChecklist: what is missing is what load would refuse, item by item.
func TestChecklist(t *testing.T) {
	a := appSetup()
	for _, tc := range []struct {
		name      string
		publicURL string
		v         settings.Values
		missing   []string
	}{
		{"nothing", "", settings.Values{}, []string{"SWITCHBOARD_PUBLIC_URL", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID"}},
		{"http URL", "http://localhost:8080", settings.Values{"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}, []string{"SWITCHBOARD_PUBLIC_URL"}},
		{"all set", "https://x.example", settings.Values{"SLACK_SIGNING_SECRET": "s", "SLACK_CLIENT_ID": "c", "SLACK_CLIENT_SECRET": "cs"}, nil},
		{"socket mode", "", settings.Values{"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": "xoxb-1"}, nil},
		{"agent off", "https://x.example", settings.Values{"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}, nil},
		{"client id without its secret", "https://x.example", settings.Values{"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_CLIENT_ID": "c"}, []string{"SLACK_CLIENT_ID"}},
		{"client secret without its id", "https://x.example", settings.Values{"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_CLIENT_SECRET": "cs"}, []string{"SLACK_CLIENT_ID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var missing []string
			for _, c := range a.Checklist(a.NewAppInput(tc.publicURL, tc.v, nil)) {
				if !c.Done {
					if c.Fix == "" {
						t.Errorf("%q is missing with no fix", c.Text)
					}
					missing = append(missing, strings.Fields(c.Text)[0])
				}
			}
			if !slices.Equal(missing, tc.missing) {
				t.Errorf("missing %v, want %v", missing, tc.missing)
			}
		})
	}
}
