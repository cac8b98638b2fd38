package linear

import (
	"errors"

	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

// newApplicationURL is Linear's form for a new OAuth application
// (Settings → API → OAuth applications → New).
const newApplicationURL = "https://linear.app/settings/api/applications/new"

// webhook is a webhook the intake reads: its payload's type, the
// resource type an application subscribes to for it (Linear's
// WebhookResourceType; "" for a payload that has none there) and the
// category's name in Linear's form.
type webhook struct {
	payload, resource, category string
}

// subscribed are the webhooks the intake acts on.
var subscribed = []webhook{
	{payload: typeAgentSessionEvent, resource: "AgentSessionEvent", category: "Agent session events"},
	{payload: typeAppNotification, resource: "AppUserNotification", category: "Inbox notifications"},
	{payload: typeIssue, resource: "Issue", category: "Issues"},
	{payload: typeOAuthApp, category: "OAuth app revoked"},
}

// WebhookResourceTypes are the resource types the application's webhook
// subscribes to.
func WebhookResourceTypes() []string {
	var out []string
	for _, w := range subscribed {
		if w.resource != "" {
			out = append(out, w.resource)
		}
	}
	return out
}

// App is what to enter in Linear for this gateway: the application, with
// the fields of Linear's OAuthApplicationCreateInput, and how the install
// authorizes it.
type App struct {
	Application   Application   `json:"application"`
	Authorization Authorization `json:"authorization"`
}

// Application is the OAuth application.
type Application struct {
	Name                 string   `json:"name"`
	Developer            string   `json:"developer"`
	DeveloperURL         string   `json:"developerUrl"`
	Description          string   `json:"description"`
	RedirectURIs         []string `json:"redirectUris"`
	WebhookURL           string   `json:"webhookUrl"`
	WebhookResourceTypes []string `json:"webhookResourceTypes"`
}

// Authorization is what the install's consent page asks for: the app
// installed as its own user (actor=app) with the scopes.
type Authorization struct {
	Actor string   `json:"actor"`
	Scope []string `json:"scope"`
}

// NewApp is the application for a gateway at publicURL, with the scopes
// the install asks for and the webhooks the intake reads.
func NewApp(publicURL string) (App, error) {
	if publicURL == "" {
		return App{}, errors.New("the application needs the gateway's public URL: pass --public-url or set SWITCHBOARD_PUBLIC_URL")
	}
	return App{
		Application: Application{
			Name: "switchboard", Developer: "switchboard", DeveloperURL: publicURL,
			Description:          "Your team's AI agent: delegate an issue to it or mention it.",
			RedirectURIs:         []string{(&oauth.Flow{Provider: Name, PublicURL: publicURL}).RedirectURI()},
			WebhookURL:           publicURL + webhookPath,
			WebhookResourceTypes: WebhookResourceTypes(),
		},
		Authorization: Authorization{Actor: actorApp, Scope: DefaultScopes},
	}, nil
}

// appSetup is the Linear application for this gateway: switchboard
// linear app, and the console's Installations page.
func appSetup() providers.AppSetup {
	return providers.AppSetup{
		Command: "app", Summary: "print the Linear OAuth application to create for this gateway's public URL",
		Formats: []string{providers.FormatJSON},
		App: func(in providers.AppInput) (providers.App, error) {
			a, err := NewApp(in.PublicURL)
			if err != nil {
				return providers.App{}, err
			}
			var categories string
			for i, w := range subscribed {
				switch {
				case i == 0:
				case i == len(subscribed)-1:
					categories += " and "
				default:
					categories += ", "
				}
				categories += w.category
			}
			return providers.App{CreateURL: newApplicationURL, Manifest: a, Steps: []string{
				"Open " + newApplicationURL + " and enter the application's name, developer, developer URL, description and callback URL (redirectUris) as the JSON says.",
				"Turn Webhooks on with the webhookUrl below and the categories " + categories + ".",
				"Copy the client id, client secret and webhook signing secret into LINEAR_CLIENT_ID, LINEAR_CLIENT_SECRET and LINEAR_WEBHOOK_SECRET and restart the gateway.",
				"A workspace admin installs it at " + in.PublicURL + "/oauth/" + Name + "/install (actor=app and the scopes of the authorization above).",
			}}, nil
		},
		Checklist: func(in providers.AppInput) []providers.Check {
			v := in.Settings
			return []providers.Check{
				providers.PublicURLCheck(in.PublicURL, "Linear"),
				providers.SettingCheck(v, "LINEAR_CLIENT_ID", "copy the application's client id"),
				providers.SettingCheck(v, "LINEAR_CLIENT_SECRET", "copy the application's client secret"),
				providers.SettingCheck(v, "LINEAR_WEBHOOK_SECRET", "copy the application's webhook signing secret"),
			}
		},
	}
}
