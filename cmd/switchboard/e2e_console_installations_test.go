package main_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/providers/slack"
)

var (
	installSlackLink = regexp.MustCompile(`id="install-slack" href="([^"]+)"`)
	editLink         = regexp.MustCompile(`id="edit-(ins_[^"]+)" href="([^"]+)"`)
	csrfValue        = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// TestConsoleInstallations: the installations page's Install Slack link
// runs the OAuth install against the fake Slack; the installation then
// shows on the page, its agent is bound through the edit form (as the API
// sees), and it is uninstalled only once confirmed, its token revoked at
// Slack.
func TestConsoleInstallations(t *testing.T) {
	w := startSlackOAuth(t)
	base := w.srv.url
	cookie := consoleSignIn(t, base)
	pageURL := base + "/console/installations"
	code, body := consoleGet(t, pageURL, cookie)
	if code != http.StatusOK || !strings.Contains(body, `id="no-installations"`) {
		t.Fatalf("installations page before any install: %d %s", code, body)
	}
	for _, off := range []string{`id="setup-github"`, `id="setup-linear"`} {
		if !strings.Contains(body, off) {
			t.Errorf("the page lacks %s", off)
		}
	}
	// How to create each app by hand, made from the gateway's own
	// settings: the manifest for its public URL with the provider's scopes,
	// and what is still missing.
	want := []string{`id="manifest-slack"`, base + "/webhooks/slack/interactivity", base + "/oauth/slack/callback",
		"Missing:</span> SWITCHBOARD_PUBLIC_URL is an https:// address Slack can reach", "Done:</span> SLACK_SIGNING_SECRET is set",
		"<code>switchboard slack manifest --public-url " + base + "</code>",
		`id="checklist-linear"`, "Missing:</span> LINEAR_CLIENT_ID is set", `id="manifest-linear"`, `<a id="setup-flow-github"`}
	for _, scope := range append(slack.Scopes(false), "search:read") {
		want = append(want, "- "+scope+"\n")
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	m := installSlackLink.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no Install Slack link in %s", body)
	}
	link := resolve(t, pageURL, m[1])
	if link != base+"/oauth/slack/install" {
		t.Fatalf("the Install Slack link goes to %s", link)
	}

	// A browser following the link: the gateway, Slack's consent, the
	// gateway's callback.
	w.fake.Approve(fakeslack.Grant{Team: fakeslack.Team{ID: "T0CON", Name: "Console Team"}, Installer: "U0ADMIN"})
	next := link
	for hop := 0; hop < 2; hop++ {
		resp, err := noFollow.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("GET %s: %d", next, resp.StatusCode)
		}
		next = resp.Header.Get("Location")
	}
	resp, err := http.Get(next)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(next, base+"/oauth/slack/callback?") || resp.StatusCode != http.StatusOK {
		t.Fatalf("callback %s: %d", next, resp.StatusCode)
	}

	code, body = consoleGet(t, pageURL, cookie)
	e := editLink.FindStringSubmatch(body)
	if code != http.StatusOK || e == nil || !strings.Contains(body, "Console Team") || !strings.Contains(body, `data-ok="true">Token valid`) {
		t.Fatalf("installations page after the install: %d %s", code, body)
	}
	id, editURL := e[1], resolve(t, pageURL, e[2])
	if _, overview := consoleGet(t, base+"/console/", cookie); !strings.Contains(overview, `<a href="installations/`+id+`">Slack · Console Team</a>`) {
		t.Errorf("the overview does not show the installation: %s", overview)
	}

	code, raw := w.srv.do("POST", "/v1/agents", map[string]any{"name": "triage", "model": "anthropic/claude-test"})
	if code != http.StatusCreated {
		t.Fatalf("create agent: %d %s", code, raw)
	}
	var agent struct{ ID string }
	mustJSON(t, raw, &agent)

	code, body = consoleGet(t, editURL, cookie)
	c := csrfValue.FindStringSubmatch(body)
	if code != http.StatusOK || c == nil || !strings.Contains(body, `<option value="`+agent.ID+`">triage (`+agent.ID+`)</option>`) {
		t.Fatalf("edit page: %d %s", code, body)
	}
	t.Run("a refused agent is shown under the field", func(t *testing.T) {
		code, body := consolePost(t, editURL, cookie, url.Values{"csrf": {c[1]}, "agent": {"agt_missing"}})
		if code != http.StatusBadRequest || !strings.Contains(body, `id="agent-error" role="alert">agent &#34;agt_missing&#34; not found`) {
			t.Fatalf("%d %s", code, body)
		}
	})
	code, _ = consolePost(t, editURL, cookie, url.Values{"csrf": {c[1]}, "agent": {agent.ID}, "channels": {"C0ONE\nC0TWO"}})
	if code != http.StatusSeeOther {
		t.Fatalf("edit: %d", code)
	}
	var in struct {
		Agent  string `json:"agent"`
		Policy struct {
			Channels []string `json:"channels"`
		} `json:"policy"`
	}
	code, raw = w.srv.do("GET", "/v1/installations/"+id, nil)
	mustJSON(t, raw, &in)
	if code != http.StatusOK || in.Agent != agent.ID || strings.Join(in.Policy.Channels, ",") != "C0ONE,C0TWO" {
		t.Fatalf("after the edit the API has %d %s", code, raw)
	}
	if _, body = consoleGet(t, pageURL, cookie); !strings.Contains(body, "<td>triage</td>") {
		t.Errorf("the page does not show the bound agent: %s", body)
	}

	uninstallURL := editURL + "/uninstall"
	if code, _ = consolePost(t, uninstallURL, cookie, url.Values{"csrf": {c[1]}}); code != http.StatusUnprocessableEntity {
		t.Fatalf("uninstall without confirming: %d", code)
	}
	if code, _ = w.srv.do("GET", "/v1/installations/"+id, nil); code != http.StatusOK {
		t.Fatalf("unconfirmed uninstall removed the installation: %d", code)
	}
	if code, _ = consolePost(t, uninstallURL, cookie, url.Values{"csrf": {c[1]}, "confirm": {"yes"}}); code != http.StatusSeeOther {
		t.Fatalf("uninstall: %d", code)
	}
	if code, _ = w.srv.do("GET", "/v1/installations/"+id, nil); code != http.StatusNotFound {
		t.Fatalf("after the uninstall the API answers %d", code)
	}
	if len(w.fake.Calls("auth.revoke")) == 0 {
		t.Error("the token was not revoked at Slack")
	}
	if _, body = consoleGet(t, pageURL, cookie); !strings.Contains(body, `id="no-installations"`) {
		t.Errorf("the page still lists the installation: %s", body)
	}
}

// resolve is href as a browser on page resolves it.
func resolve(t *testing.T, page, href string) string {
	t.Helper()
	p, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	h, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return p.ResolveReference(h).String()
}
