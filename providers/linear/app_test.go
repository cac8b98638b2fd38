package linear

import (
	"bufio"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers/providertest"
)

// TestAppHasTheDocumentedFields: what to enter in Linear has only the
// fields of Linear's OAuthApplicationCreateInput and of its authorize
// parameters, the required ones among them, and its values are ones
// Linear documents.
func TestAppHasTheDocumentedFields(t *testing.T) {
	a, err := NewApp("https://x.example")
	if err != nil {
		t.Fatal(err)
	}
	providertest.CheckDocumentedFields(t, a, "testdata/app_fields.txt", "application.name", "application.redirectUris",
		"application.webhookUrl", "application.webhookResourceTypes", "authorization.actor", "authorization.scope")
	documented := documentedValues(t)
	for kind, values := range map[string][]string{"resource": a.Application.WebhookResourceTypes, "scope": a.Authorization.Scope, "actor": {a.Authorization.Actor}} {
		for _, v := range values {
			if !documented[kind+" "+v] {
				t.Errorf("%s %q is not among the documented ones", kind, v)
			}
		}
	}
	if got, want := a.Application.RedirectURIs, []string{"https://x.example/oauth/linear/callback"}; !slices.Equal(got, want) {
		t.Errorf("redirectUris = %v, want %v", got, want)
	}
	if got := a.Application.WebhookURL; got != "https://x.example/webhooks/linear" {
		t.Errorf("webhookUrl = %q", got)
	}
	if _, err := NewApp(""); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("no public URL: err = %v, want one naming --public-url", err)
	}
}

func documentedValues(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("testdata/documented_values.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}

// TestAppIsWhatTheProviderUses: one source. The application's scopes
// and actor are exactly what the install's consent page asks for, and
// its webhooks cover exactly the payload types the intake acts on (the
// package's type* constants).
func TestAppIsWhatTheProviderUses(t *testing.T) {
	a, err := NewApp("https://x.example")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{ClientID: "c", ClientSecret: "cs", WebhookSecret: "w"})
	if err != nil {
		t.Fatal(err)
	}
	authorize, err := url.Parse(p.Installer().AuthorizeURL("state", a.Application.RedirectURIs[0]))
	if err != nil {
		t.Fatal(err)
	}
	q := authorize.Query()
	if got := strings.Split(q.Get("scope"), ","); !slices.Equal(got, a.Authorization.Scope) {
		t.Errorf("the install asks for %v, the application says %v", got, a.Authorization.Scope)
	}
	if q.Get("actor") != a.Authorization.Actor {
		t.Errorf("the install's actor %q, the application's %q", q.Get("actor"), a.Authorization.Actor)
	}
	var payloads []string
	for _, w := range subscribed {
		payloads = append(payloads, w.payload)
		if w.resource != "" && !slices.Contains(a.Application.WebhookResourceTypes, w.resource) {
			t.Errorf("the application does not subscribe to %s", w.resource)
		}
	}
	handled := providertest.StringConstants(t, "decode.go", "type")
	slices.Sort(handled)
	slices.Sort(payloads)
	if !slices.Equal(payloads, handled) {
		t.Errorf("the application's webhooks are %v, the intake acts on %v", payloads, handled)
	}
}

// TestAppChecklist: each setting load requires is an item.
func TestAppChecklist(t *testing.T) {
	a := appSetup()
	var missing []string
	for _, c := range a.Checklist(a.NewAppInput("https://x.example", settings.Values{"LINEAR_CLIENT_ID": "c"}, nil)) {
		if !c.Done {
			missing = append(missing, strings.Fields(c.Text)[0])
		}
	}
	if want := []string{"LINEAR_CLIENT_SECRET", "LINEAR_WEBHOOK_SECRET"}; !slices.Equal(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
}
