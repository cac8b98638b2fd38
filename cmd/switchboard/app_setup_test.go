package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/providers/linear"
	"github.com/switchboardhq/switchboard/providers/providertest"
	"github.com/switchboardhq/switchboard/providers/slack"
	"go.yaml.in/yaml/v3"
)

// TestCLIAppSetup: switchboard slack manifest and switchboard linear
// app, as a person runs them, print manifests with the fields each
// platform documents and exactly the scopes and events (resource types)
// the providers use.
func TestCLIAppSetup(t *testing.T) {
	t.Run("slack manifest", func(t *testing.T) {
		code, out, errOut := runHelp("slack", "manifest", "--public-url", "https://x.example")
		if code != 0 || !strings.Contains(errOut, "From a manifest") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, out)
		}
		providertest.CheckDocumentedFields(t, m, "../../providers/slack/testdata/manifest_fields.txt",
			"display_information.name", "features.bot_user.display_name", "oauth_config.scopes.bot", "oauth_config.redirect_urls",
			"settings.event_subscriptions.request_url", "settings.event_subscriptions.bot_events", "settings.interactivity.request_url", "settings.socket_mode_enabled")
		var typed slack.Manifest
		if err := yaml.Unmarshal([]byte(out), &typed); err != nil {
			t.Fatal(err)
		}
		if got := typed.OAuthConfig.Scopes.Bot; !slices.Equal(got, slack.Scopes(false)) {
			t.Errorf("scopes %v, the provider's %v", got, slack.Scopes(false))
		}
		if got := typed.Settings.EventSubscriptions.BotEvents; !slices.Equal(got, slack.BotEvents(false)) {
			t.Errorf("events %v, the provider's %v", got, slack.BotEvents(false))
		}
	})
	t.Run("slack manifest as an agent", func(t *testing.T) {
		code, out, errOut := runHelp("slack", "manifest", "--public-url", "https://x.example", "--agent", "--json")
		if code != 0 || !strings.Contains(out, `"agent_view"`) || !strings.Contains(out, `"`+slack.AgentScope+`"`) {
			t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
		}
	})
	t.Run("linear app", func(t *testing.T) {
		code, out, errOut := runHelp("linear", "app", "--public-url", "https://x.example")
		if code != 0 || !strings.Contains(errOut, "linear.app/settings/api/applications/new") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var a linear.App
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		providertest.CheckDocumentedFields(t, m, "../../providers/linear/testdata/app_fields.txt", "application.redirectUris", "application.webhookResourceTypes", "authorization.scope")
		if !slices.Equal(a.Authorization.Scope, linear.DefaultScopes) || !slices.Equal(a.Application.WebhookResourceTypes, linear.WebhookResourceTypes()) {
			t.Errorf("scopes %v, resource types %v: not the provider's", a.Authorization.Scope, a.Application.WebhookResourceTypes)
		}
	})
	t.Run("no public URL", func(t *testing.T) {
		if code, _, errOut := runHelp("linear", "app"); code != 1 || !strings.Contains(errOut, "SWITCHBOARD_PUBLIC_URL") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}
