package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core/settings"
	"go.yaml.in/yaml/v3"
)

// AppSetup is how a platform's app is created on the platform by hand:
// what to enter there for this gateway (a manifest to paste, or the
// fields of a form), and what the gateway still lacks to serve the
// platform. A module that has one declares it; the binary makes the
// command "switchboard <platform> <Command>" of it and the console shows
// it on its Installations page, neither naming the platform.
type AppSetup struct {
	// Command is the subcommand under the platform's name ("manifest"),
	// Summary what it prints.
	Command, Summary string
	// Switches are the choices the app's set-up depends on, each a flag of
	// the command whose default comes from the gateway's settings.
	Switches []AppSwitch
	// Formats are how the set-up can be printed, the default first:
	// FormatYAML, FormatJSON.
	Formats []string
	// App is the set-up for this gateway; an error says what is missing
	// to make it (a public URL, most often).
	App func(in AppInput) (App, error)
	// Checklist is what the gateway has and still lacks to serve the
	// platform, in the order it is done.
	Checklist func(in AppInput) []Check
}

// The formats an app's set-up is printed in.
const (
	FormatYAML = "yaml"
	FormatJSON = "json"
)

// AppSwitch is one on/off choice of an app's set-up.
type AppSwitch struct {
	// Flag names it on the command line ("socket-mode"), Usage says what
	// it does.
	Flag, Usage string
	// On is its default: what the gateway's settings say.
	On func(v settings.Values) bool
}

// AppInput is what an app's set-up is made from.
type AppInput struct {
	// PublicURL is the gateway's public base, without a trailing slash.
	PublicURL string
	// Switches are the choices, by flag; a missing one is off.
	Switches map[string]bool
	// Settings are the gateway's own settings (its environment).
	Settings settings.Values
}

// NewAppInput is the input for the gateway's settings v and its public
// URL, with each switch as the settings say unless set names it.
func (a AppSetup) NewAppInput(publicURL string, v settings.Values, set map[string]bool) AppInput {
	in := AppInput{PublicURL: strings.TrimRight(publicURL, "/"), Switches: map[string]bool{}, Settings: v}
	for _, s := range a.Switches {
		on, ok := set[s.Flag]
		if !ok && s.On != nil {
			on = s.On(v)
		}
		in.Switches[s.Flag] = on
	}
	return in
}

// App is a platform app's set-up for one gateway.
type App struct {
	// CreateURL is the platform's page where the app is created.
	CreateURL string
	// Steps say what to do, in order, with Manifest and after.
	Steps []string
	// Manifest is what to paste or enter, printed as JSON or YAML in
	// its fields' order.
	Manifest any
}

// Render prints the manifest in format, FormatYAML or FormatJSON.
func (a App) Render(format string) (string, error) {
	switch format {
	case FormatJSON:
		b, err := json.MarshalIndent(a.Manifest, "", "  ")
		if err != nil {
			return "", fmt.Errorf("manifest as json: %w", err)
		}
		return string(b) + "\n", nil
	case FormatYAML:
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(a.Manifest); err != nil {
			return "", fmt.Errorf("manifest as yaml: %w", err)
		}
		if err := enc.Close(); err != nil {
			return "", fmt.Errorf("manifest as yaml: %w", err)
		}
		return buf.String(), nil
	}
	return "", fmt.Errorf("format %q: want %s or %s", format, FormatYAML, FormatJSON)
}

// Check is one item of what a platform needs from the gateway.
type Check struct {
	// Text says what is needed ("SLACK_SIGNING_SECRET is set"), Done
	// whether the gateway has it and Fix, when not, how to get it.
	Text string
	Done bool
	Fix  string
}

// SettingCheck is the item "name is set".
func SettingCheck(v settings.Values, name, fix string) Check {
	return Check{Text: name + " is set", Done: v[name] != "", Fix: fix}
}

// PublicURLCheck is the item "the public URL is reachable from the
// platform": set, and over HTTPS (a platform delivers webhooks to no
// other).
func PublicURLCheck(publicURL, label string) Check {
	c := Check{Text: "SWITCHBOARD_PUBLIC_URL is an https:// address " + label + " can reach", Done: strings.HasPrefix(publicURL, "https://")}
	if !c.Done {
		c.Fix = "set SWITCHBOARD_PUBLIC_URL to the gateway's public https:// address (a tunnel will do while trying it)"
	}
	return c
}
