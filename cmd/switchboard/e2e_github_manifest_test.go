package main_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubManifest: with no App configured, an admin creates one from
// the manifest page: the admin token is required; the form posts a
// manifest naming the gateway's webhook and setup URLs to GitHub with a
// single-use state; the callback converts the code and stores the App
// sealed (no secret readable in the data directory); a second creation is
// refused; the next start acts as the App (webhooks signed with its
// secret are taken, others refused).
func TestGitHubManifest(t *testing.T) {
	ms, hs := modelserver.Start(t)
	fake := fakegithub.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["GITHUB_API_URL"] = fake.APIURL()
	env["GITHUB_WEB_URL"] = fake.URL
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, env)

	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(form url.Values) (int, string) {
		t.Helper()
		resp, err := http.PostForm(srv.url+"/oauth/github/manifest", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(srv.url + "/oauth/github/manifest"); code != 200 || !strings.Contains(body, `name="admin_token"`) {
		t.Fatalf("form: %d %s", code, body)
	}
	for name, form := range map[string]url.Values{
		"no token":         {"organization": {"acme"}},
		"wrong token":      {"admin_token": {"nope"}},
		"bad organization": {"admin_token": {adminToken}, "organization": {"acme/../x"}},
	} {
		if code, _ := post(form); code != http.StatusUnauthorized && code != http.StatusBadRequest {
			t.Fatalf("%s: %d", name, code)
		}
	}
	code, body := post(url.Values{"admin_token": {adminToken}, "organization": {"acme"}, "name": {"Widgets bot"}})
	if code != 200 {
		t.Fatalf("start: %d %s", code, body)
	}
	action := html.UnescapeString(regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(body)[1])
	au, err := url.Parse(action)
	if err != nil || !strings.HasPrefix(action, fake.URL+"/organizations/acme/settings/apps/new?") || au.Query().Get("state") == "" {
		t.Fatalf("form action %q", action)
	}
	var manifest struct {
		Name  string               `json:"name"`
		Hook  struct{ URL string } `json:"hook_attributes"`
		Setup string               `json:"setup_url"`
		Redir string               `json:"redirect_url"`
		Evs   []string             `json:"default_events"`
		Perms map[string]string    `json:"default_permissions"`
	}
	raw := html.UnescapeString(regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(body)[1])
	mustJSON(t, json.RawMessage(raw), &manifest)
	if manifest.Name != "Widgets bot" || manifest.Hook.URL != srv.url+"/webhooks/github" || manifest.Setup != srv.url+"/oauth/github/callback" ||
		manifest.Redir != srv.url+"/oauth/github/manifest/callback" || !slices.Contains(manifest.Evs, "pull_request_review_comment") || manifest.Perms["checks"] != "write" {
		t.Fatalf("manifest %s", raw)
	}

	// GitHub sends the person back with a code and the state.
	const secret = "manifest-webhook-secret"
	state := au.Query().Get("state")
	callback := func(code string) (int, string) {
		return get(srv.url + "/oauth/github/manifest/callback?" + url.Values{"code": {code}, "state": {state}}.Encode())
	}
	if code, body := get(srv.url + "/oauth/github/manifest/callback?" + url.Values{"code": {fake.ManifestCode(secret)}, "state": {"forged." + state}}.Encode()); code != 400 {
		t.Fatalf("forged state: %d %s", code, body)
	}
	if code, body := callback(fake.ManifestCode(secret)); code != 200 || !strings.Contains(body, fake.Slug) {
		t.Fatalf("callback: %d %s", code, body)
	}
	if code, _ := callback(fake.ManifestCode(secret)); code != http.StatusConflict {
		t.Fatalf("a second App after the first: %d", code)
	}
	sealed, err := os.ReadFile(filepath.Join(dataDir, "github-app.sealed"))
	if err != nil {
		t.Fatal(err)
	}
	keyLine := strings.Split(string(fake.KeyPEM), "\n")[1]
	if strings.Contains(string(sealed), secret) || strings.Contains(string(sealed), keyLine) {
		t.Fatal("the stored App is readable")
	}

	// The next start acts as the App.
	srv.kill()
	w := &githubWorld{t: t, ms: ms, fake: fake, env: env, srv: srv.restart()}
	if code, _ := get(w.srv.url + "/oauth/github/manifest"); code != http.StatusConflict {
		t.Fatalf("manifest page with an App configured: %d", code)
	}
	w.fake.SetPermission("carol", "write")
	ms.Push(modelserver.Step{Text: "On it."})
	if code := w.deliver("issue_comment", "", issueComment(3, false, 501, "carol", "@"+fake.Slug+" hello"), "wrong-secret"); code != 401 {
		t.Fatalf("wrong secret: %d", code)
	}
	if code := w.deliver("issue_comment", "", issueComment(3, false, 501, "carol", "@"+fake.Slug+" hello"), secret); code != 200 {
		t.Fatalf("signed with the App's secret: %d", code)
	}
	w.srv.waitIdle(w.session("github:acme/widgets#3"))
}
