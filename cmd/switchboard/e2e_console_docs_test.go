package main_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestConsoleDocLinks: every reference to docs/ a console page prints,
// as a link or as a name, is a page the gateway serves at /docs/, and
// the overview names why this gateway has no sandboxes.
func TestConsoleDocLinks(t *testing.T) {
	ms, srv := toolsEnv(t)
	agent := srv.agent(map[string]any{"name": "docs"})
	ms.Push(modelserver.Step{Text: "done"})
	id := srv.startSession(agent, "hello")
	srv.waitIdle(id)
	cookie := consoleSignIn(t, srv.url)

	links := regexp.MustCompile(`href="((?:\.\./)*docs/[^"]*)"`)
	names := regexp.MustCompile(`docs/[a-z0-9-]+\.md`)
	refs := map[string]string{} // address → the page that names it
	for _, page := range []string{"", "sessions", "sessions/" + id, "agents", "agents/new", "installations", "skills", "memory", "environments", "vaults", "webhooks", "schedules"} {
		u := srv.url + "/console/" + page
		code, body := consoleGet(t, u, cookie)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", u, code)
		}
		base, _ := url.Parse(u)
		for _, m := range links.FindAllStringSubmatch(body, -1) {
			ref, err := base.Parse(m[1])
			if err != nil {
				t.Fatalf("%s links %q: %v", u, m[1], err)
			}
			refs[ref.String()] = u
		}
		for _, m := range names.FindAllString(body, -1) {
			refs[srv.url+"/"+m] = u
		}
		if page == "" && !strings.Contains(body, `<span id="sandboxes-cause">SWITCHBOARD_SANDBOX is none</span>`) {
			t.Errorf("the overview does not name why sandboxes are off:\n%s", body)
		}
	}
	if len(refs) < 2 {
		t.Fatalf("the console names only %v", refs)
	}
	for ref, from := range refs {
		if !strings.HasPrefix(ref, srv.url+"/docs/") {
			t.Errorf("%s links %s, outside the gateway's docs", from, ref)
			continue
		}
		resp, err := http.Get(ref)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s names %s: %d", from, ref, resp.StatusCode)
		}
	}
}
