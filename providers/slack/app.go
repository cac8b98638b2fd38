package slack

import (
	"errors"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

// The switches of the manifest: Socket Mode (on when SLACK_APP_TOKEN is
// set) and the agent surface (SLACK_AGENT).
const (
	switchSocket = "socket-mode"
	switchAgent  = "agent"
)

// createAppURL is Slack's page for a new app; "From a manifest" takes
// the manifest as YAML or JSON.
const createAppURL = "https://api.slack.com/apps?new_app=1"

// appSetup is the Slack app's manifest for this gateway: switchboard
// slack manifest, and the console's Installations page.
func appSetup() providers.AppSetup {
	return providers.AppSetup{
		Command: "manifest",
		Summary: "print the Slack app manifest for this gateway's public URL",
		Switches: []providers.AppSwitch{
			{Flag: switchSocket, Usage: "Socket Mode: events and buttons over a WebSocket the gateway opens, no request URLs (default: on when SLACK_APP_TOKEN is set)",
				On: func(v settings.Values) bool { return v["SLACK_APP_TOKEN"] != "" }},
			{Flag: switchAgent, Usage: "the app is a Slack agent: agent_view, the " + AgentScope + " scope and the " + evAgentStopped + " event (default: SLACK_AGENT)",
				On: func(v settings.Values) bool { on, _ := v.Bool("SLACK_AGENT"); return on }},
		},
		Formats:   []string{providers.FormatYAML, providers.FormatJSON},
		App:       app,
		Checklist: setupChecklist,
	}
}

// Manifest is a Slack app manifest (https://docs.slack.dev/reference/app-manifest),
// with the fields this gateway's app sets, in the documentation's order.
type Manifest struct {
	Metadata    ManifestMetadata `json:"_metadata" yaml:"_metadata"`
	Display     Display          `json:"display_information" yaml:"display_information"`
	Features    Features         `json:"features" yaml:"features"`
	OAuthConfig OAuthConfig      `json:"oauth_config" yaml:"oauth_config"`
	Settings    AppSettings      `json:"settings" yaml:"settings"`
}

// ManifestMetadata is the manifest schema's version.
type ManifestMetadata struct {
	MajorVersion int `json:"major_version" yaml:"major_version"`
	MinorVersion int `json:"minor_version" yaml:"minor_version"`
}

// Display is how the app shows in Slack.
type Display struct {
	Name            string `json:"name" yaml:"name"`
	Description     string `json:"description" yaml:"description"`
	BackgroundColor string `json:"background_color" yaml:"background_color"`
}

// Features are the app's bot user, its messages tab and, for an agent,
// its agent view.
type Features struct {
	AppHome   AppHome    `json:"app_home" yaml:"app_home"`
	BotUser   BotUser    `json:"bot_user" yaml:"bot_user"`
	AgentView *AgentView `json:"agent_view,omitempty" yaml:"agent_view,omitempty"`
}

// AppHome is the app's home: its messages tab takes direct messages.
type AppHome struct {
	HomeTabEnabled             bool `json:"home_tab_enabled" yaml:"home_tab_enabled"`
	MessagesTabEnabled         bool `json:"messages_tab_enabled" yaml:"messages_tab_enabled"`
	MessagesTabReadOnlyEnabled bool `json:"messages_tab_read_only_enabled" yaml:"messages_tab_read_only_enabled"`
}

// BotUser is the app's bot user.
type BotUser struct {
	DisplayName  string `json:"display_name" yaml:"display_name"`
	AlwaysOnline bool   `json:"always_online" yaml:"always_online"`
}

// AgentView makes the app a Slack agent: answers stream into the thread
// and its agent session shows each turn with Slack's own stop.
type AgentView struct {
	AgentDescription string `json:"agent_description" yaml:"agent_description"`
}

// OAuthConfig is where installs come back to and the scopes they grant.
type OAuthConfig struct {
	RedirectURLs []string `json:"redirect_urls,omitempty" yaml:"redirect_urls,omitempty"`
	Scopes       Scopeset `json:"scopes" yaml:"scopes"`
}

// Scopeset are the bot scopes and the installing user's.
type Scopeset struct {
	Bot  []string `json:"bot" yaml:"bot"`
	User []string `json:"user,omitempty" yaml:"user,omitempty"`
}

// AppSettings are where Slack sends events and button clicks.
type AppSettings struct {
	EventSubscriptions   EventSubscriptions `json:"event_subscriptions" yaml:"event_subscriptions"`
	Interactivity        Interactivity      `json:"interactivity" yaml:"interactivity"`
	OrgDeployEnabled     bool               `json:"org_deploy_enabled" yaml:"org_deploy_enabled"`
	SocketModeEnabled    bool               `json:"socket_mode_enabled" yaml:"socket_mode_enabled"`
	TokenRotationEnabled bool               `json:"token_rotation_enabled" yaml:"token_rotation_enabled"`
}

// EventSubscriptions are the Events API's request URL (none in Socket
// Mode) and the bot events.
type EventSubscriptions struct {
	RequestURL string   `json:"request_url,omitempty" yaml:"request_url,omitempty"`
	BotEvents  []string `json:"bot_events" yaml:"bot_events"`
}

// Interactivity is where button clicks go (over the socket in Socket
// Mode).
type Interactivity struct {
	IsEnabled  bool   `json:"is_enabled" yaml:"is_enabled"`
	RequestURL string `json:"request_url,omitempty" yaml:"request_url,omitempty"`
}

// errNoPublicURL is a manifest asked for without the address Slack
// sends to.
var errNoPublicURL = errors.New("the manifest needs the gateway's public URL: pass --public-url or set SWITCHBOARD_PUBLIC_URL (or use --socket-mode with SLACK_BOT_TOKEN, which needs none)")

// NewManifest is the app's manifest for a gateway at publicURL (empty in
// Socket Mode with a bot token: no URL is then reached), with the scopes
// the install asks for and the events the intake reads.
func NewManifest(publicURL string, socket, agent bool, userScopes []string) (Manifest, error) {
	if publicURL == "" && !socket {
		return Manifest{}, errNoPublicURL
	}
	m := Manifest{
		Metadata: ManifestMetadata{MajorVersion: 1, MinorVersion: 1},
		Display:  Display{Name: "switchboard", Description: "Your team's AI agent, in your threads.", BackgroundColor: "#1d3557"},
		Features: Features{
			AppHome: AppHome{MessagesTabEnabled: true},
			BotUser: BotUser{DisplayName: "switchboard", AlwaysOnline: true},
		},
		OAuthConfig: OAuthConfig{Scopes: Scopeset{Bot: Scopes(agent), User: userScopes}},
		Settings: AppSettings{
			EventSubscriptions: EventSubscriptions{BotEvents: BotEvents(agent)},
			Interactivity:      Interactivity{IsEnabled: true},
			SocketModeEnabled:  socket,
		},
	}
	if agent {
		m.Features.AgentView = &AgentView{AgentDescription: "Your team's coding agent; mention it in a thread."}
	}
	if publicURL != "" {
		m.OAuthConfig.RedirectURLs = []string{(&oauth.Flow{Provider: Name, PublicURL: publicURL}).RedirectURI()}
	}
	if !socket {
		m.Settings.EventSubscriptions.RequestURL = publicURL + eventsPath
		m.Settings.Interactivity.RequestURL = publicURL + interactivityPath
	}
	return m, nil
}

func app(in providers.AppInput) (providers.App, error) {
	socket, agent := in.Switches[switchSocket], in.Switches[switchAgent]
	m, err := NewManifest(in.PublicURL, socket, agent, splitScopes(in.Settings["SLACK_USER_SCOPES"]))
	if err != nil {
		return providers.App{}, err
	}
	steps := []string{
		"Open " + createAppURL + ", choose From a manifest and a workspace, and paste the manifest.",
	}
	if socket {
		steps = append(steps, "Under Basic Information → App-Level Tokens, create a token with the connections:write scope and set it as SLACK_APP_TOKEN.")
	} else {
		steps = append(steps, "Under Basic Information, copy the Signing Secret into SLACK_SIGNING_SECRET; start the gateway before Slack verifies the request URLs.")
	}
	steps = append(steps,
		"Either copy the Client ID and Client Secret into SLACK_CLIENT_ID and SLACK_CLIENT_SECRET and install at "+orPlaceholder(in.PublicURL)+"/oauth/slack/install (any number of workspaces), or install the app to one workspace and set its Bot User OAuth Token as SLACK_BOT_TOKEN.",
	)
	if agent {
		steps = append(steps, "Set SLACK_AGENT=true.")
	}
	steps = append(steps, "Restart the gateway.")
	return providers.App{CreateURL: createAppURL, Steps: steps, Manifest: m}, nil
}

// orPlaceholder is the public URL, or how the docs write it when unset.
func orPlaceholder(publicURL string) string {
	if publicURL == "" {
		return "<SWITCHBOARD_PUBLIC_URL>"
	}
	return publicURL
}

// setupChecklist is what the gateway has, and lacks, to serve Slack: the
// same conditions load checks, read as a list.
func setupChecklist(in providers.AppInput) []providers.Check {
	v := in.Settings
	var out []providers.Check
	if in.Switches[switchSocket] {
		out = append(out, providers.SettingCheck(v, "SLACK_APP_TOKEN", "create an app-level token with connections:write (Basic Information → App-Level Tokens)"))
	} else {
		out = append(out, providers.PublicURLCheck(in.PublicURL, "Slack"),
			providers.SettingCheck(v, "SLACK_SIGNING_SECRET", "copy the app's Signing Secret (Basic Information)"))
	}
	install := providers.Check{Text: "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set, or SLACK_BOT_TOKEN",
		Done: v["SLACK_BOT_TOKEN"] != "" || (v["SLACK_CLIENT_ID"] != "" && v["SLACK_CLIENT_SECRET"] != "")}
	if !install.Done {
		install.Fix = "copy the Client ID and Client Secret (Basic Information), or install the app to one workspace and copy its Bot User OAuth Token (OAuth & Permissions)"
	}
	out = append(out, install)
	// load refuses one of the pair without the other, whatever else is set.
	if (v["SLACK_CLIENT_ID"] == "") != (v["SLACK_CLIENT_SECRET"] == "") {
		out = append(out, providers.Check{Text: "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set together",
			Fix: "set both from Basic Information → App Credentials, or neither"})
	}
	if in.Switches[switchAgent] {
		agent, _ := v.Bool("SLACK_AGENT")
		c := providers.Check{Text: "SLACK_AGENT is true, as the manifest's agent_view says", Done: agent}
		if !agent {
			c.Fix = "set SLACK_AGENT=true"
		}
		out = append(out, c)
	}
	return out
}
