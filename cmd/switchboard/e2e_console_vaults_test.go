package main_test

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// consoleForm signs in and returns the cookie and the CSRF token of page.
func consoleForm(t *testing.T, base, page string) (*http.Cookie, string) {
	t.Helper()
	cookie := consoleSignIn(t, base)
	code, body := consoleGet(t, base+page, cookie)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("%s: %d without a CSRF field", page, code)
	}
	return cookie, m[1]
}

// TestConsoleVaultsCredentialValues: a vault and a credential made through
// the console's forms are the API's; the credential's values (the first,
// a refused one and a rotated one) reach no console page and no log line.
func TestConsoleVaultsCredentialValues(t *testing.T) {
	srv := startServer(t, t.TempDir(), nil)
	cookie, csrf := consoleForm(t, srv.url, "/console/vaults")
	values := []string{"tok-console-e2e-81c2f4a9", "tok-refused-e2e-77d01b3c", "tok-rotated-e2e-3e9a6c05"}
	var pages []string
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf", csrf)
		req, err := http.NewRequest("POST", srv.url+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, string(b))
		return resp.StatusCode, resp.Header.Get("Location")
	}

	code, loc := post("/console/vaults", url.Values{"name": {"team"}, "description": {"made in the console"}})
	m := regexp.MustCompile(`^vaults/(vlt_\w+)$`).FindStringSubmatch(loc)
	if code != http.StatusSeeOther || m == nil {
		t.Fatalf("create vault: %d %q", code, loc)
	}
	vault := m[1]
	var list struct {
		Data []struct{ ID, Name, Description string }
	}
	code, raw := srv.do("GET", "/v1/vaults", nil)
	mustJSON(t, raw, &list)
	if code != 200 || len(list.Data) != 1 || list.Data[0].ID != vault || list.Data[0].Description != "made in the console" {
		t.Fatalf("vaults by the API: %d %s", code, raw)
	}

	if code, loc = post("/console/vaults/"+vault+"/credentials", url.Values{
		"kind": {"static_bearer"}, "name": {"docs"}, "hosts": {"docs.example.com"}, "token": {values[0]},
	}); code != http.StatusSeeOther || loc != "../../vaults/"+vault {
		t.Fatalf("create credential: %d %q", code, loc)
	}
	var creds struct {
		Data []struct {
			ID, Name, Kind string
			Hosts          []string
		}
	}
	code, raw = srv.do("GET", "/v1/vaults/"+vault+"/credentials", nil)
	mustJSON(t, raw, &creds)
	if code != 200 || len(creds.Data) != 1 || creds.Data[0].Name != "docs" || creds.Data[0].Hosts[0] != "docs.example.com" {
		t.Fatalf("credentials by the API: %d %s", code, raw)
	}
	cred := creds.Data[0].ID

	// A refused form is shown again, without the value typed.
	form := url.Values{"csrf": {csrf}, "kind": {"header"}, "name": {"search"}, "hosts": {"search.example.com"}, "header_name": {"Host"}, "value": {values[1]}}
	code, body := consolePost(t, srv.url+"/console/vaults/"+vault+"/credentials", cookie, form)
	if code != http.StatusBadRequest || !strings.Contains(body, `id="credential-header-header_name-error"`) || !strings.Contains(body, `id="credential-header-cleared"`) {
		t.Fatalf("refused credential: %d\n%s", code, body)
	}
	pages = append(pages, body)

	if code, loc = post("/console/vaults/"+vault+"/credentials/"+cred+"/rotate", url.Values{"token": {values[2]}}); code != http.StatusSeeOther {
		t.Fatalf("rotate: %d %q", code, loc)
	}
	code, body = consoleGet(t, srv.url+"/console/vaults/"+vault, cookie)
	if code != http.StatusOK || !strings.Contains(body, `id="cred-`+cred+`"`) || !strings.Contains(body, `name="token" type="password" autocomplete="off"`) {
		t.Fatalf("vault page: %d\n%s", code, body)
	}
	pages = append(pages, body)
	_, body = consoleGet(t, srv.url+"/console/vaults", cookie)
	pages = append(pages, body)
	for _, p := range pages {
		for _, v := range values {
			if strings.Contains(p, v) {
				t.Fatalf("a console page holds a credential value:\n%s", p)
			}
		}
	}
	if code, _ = post("/console/vaults/"+vault+"/credentials/"+cred+"/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("delete credential: %d", code)
	}
	if code, raw = srv.do("GET", "/v1/vaults/"+vault+"/credentials/"+cred, nil); code != 404 {
		t.Fatalf("the deleted credential: %d %s", code, raw)
	}
	if code, _ = post("/console/vaults/"+vault+"/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("delete vault: %d", code)
	}
	if code, raw = srv.do("GET", "/v1/vaults/"+vault, nil); code != 404 {
		t.Fatalf("the deleted vault: %d %s", code, raw)
	}
	if err := srv.term(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if strings.Contains(srv.out.String(), v) {
			t.Fatal("a credential value is in the gateway's log")
		}
	}
}

// TestConsoleWebhooksDeadLetterRedeliver: a destination made in the
// console whose receiver always fails ends dead-lettered; the console
// lists it in its dead section, its Redeliver makes the gateway attempt it
// again, and its Pause and Resume reach the API.
func TestConsoleWebhooksDeadLetterRedeliver(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "Hello from the model."})
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(rc.Close)
	env := hookEnv(hs.URL)
	env["SWITCHBOARD_WEBHOOK_HORIZON_SECONDS"] = "1"
	srv := startServer(t, t.TempDir(), env)
	cookie, csrf := consoleForm(t, srv.url, "/console/webhooks")

	code, body := consolePost(t, srv.url+"/console/webhooks/destinations", cookie, url.Values{
		"csrf": {csrf}, "url": {rc.URL + "/fails"}, "level": {"user"}, "types": {"user.message"},
	})
	m := regexp.MustCompile(`id="destination-id">(dst_\w+)<`).FindStringSubmatch(body)
	// The page escapes the secret in its attribute (a base64 "+" reads
	// "&#43;"), so it is read back unescaped and looked for in both forms.
	shown := regexp.MustCompile(`id="destination-secret"[^>]* value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusCreated || m == nil || shown == nil || !strings.HasPrefix(html.UnescapeString(shown[1]), "whsec_") {
		t.Fatalf("create destination: %d\n%s", code, body)
	}
	secret, escapedSecret := html.UnescapeString(shown[1]), shown[1]
	dest := m[1]
	var d struct{ ID, Status, Level string }
	code, raw := srv.do("GET", "/v1/destinations/"+dest, nil)
	mustJSON(t, raw, &d)
	if code != 200 || d.Level != "user" || d.Status != "active" {
		t.Fatalf("the destination by the API: %d %s", code, raw)
	}

	srv.createSession("ping the hooks")
	waitUntil(t, "a dead letter", func() bool { return len(srv.deliveries("state=dead&destination="+dest)) == 1 })
	dead := srv.deliveries("state=dead&destination=" + dest)[0]
	code, body = consoleGet(t, srv.url+"/console/webhooks", cookie)
	if code != http.StatusOK {
		t.Fatalf("webhooks page: %d", code)
	}
	if strings.Contains(body, secret) || strings.Contains(body, escapedSecret) {
		t.Fatal("the signing secret is shown again")
	}
	section := body[strings.Index(body, `<section id="dead"`):]
	section = section[:strings.Index(section, "</section>")]
	if !strings.Contains(section, `data-delivery="`+dead.ID+`"`) || !strings.Contains(section, "/redeliver") || !strings.Contains(section, "HTTP 500") {
		t.Fatalf("the dead section:\n%s", section)
	}
	code, body = consoleGet(t, srv.url+"/console/webhooks/deliveries/"+dead.ID, cookie)
	if code != http.StatusOK || !strings.Contains(body, `id="delivery-event-type">user.message`) || !strings.Contains(body, `id="delivery-state">dead`) {
		t.Fatalf("delivery page: %d\n%s", code, body)
	}

	before := hits.Load()
	code, _ = consolePost(t, srv.url+"/console/webhooks/deliveries/"+dead.ID+"/redeliver", cookie, url.Values{"csrf": {csrf}})
	if code != http.StatusSeeOther {
		t.Fatalf("redeliver: %d", code)
	}
	waitUntil(t, "a new attempt", func() bool {
		ds := srv.deliveries("destination=" + dest)
		return len(ds) == 1 && ds[0].AttemptCount > dead.AttemptCount
	})
	if hits.Load() <= before {
		t.Fatal("the receiver saw no new attempt")
	}

	for _, step := range []struct{ action, want string }{{"pause", "paused"}, {"resume", "active"}} {
		code, _ = consolePost(t, srv.url+"/console/webhooks/destinations/"+dest+"/"+step.action, cookie, url.Values{"csrf": {csrf}})
		if code != http.StatusSeeOther {
			t.Fatalf("%s: %d", step.action, code)
		}
		code, raw = srv.do("GET", "/v1/destinations/"+dest, nil)
		mustJSON(t, raw, &d)
		if code != 200 || d.Status != step.want {
			t.Fatalf("after %s the API says %s", step.action, raw)
		}
		_, body = consoleGet(t, srv.url+"/console/webhooks", cookie)
		if !strings.Contains(body, `data-destination="`+dest+`" data-status="`+step.want+`"`) {
			t.Fatalf("after %s the console does not show %s", step.action, step.want)
		}
	}
}
