package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitLabOAuthInstall: serve with the OAuth application instead of a
// project token. Before the install a mention names no one and nothing
// happens; the install link goes through GitLab's consent page (PKCE) to
// the callback, and then a Developer's mention is answered, as the
// installing user, also after a restart; deleting the installation
// revokes its tokens at GitLab.
func TestGitLabOAuthInstall(t *testing.T) {
	w := startGitLab(t, map[string]string{"SWITCHBOARD_GITLAB_TOKEN": "", "SWITCHBOARD_GITLAB_PROJECT": "",
		"SWITCHBOARD_GITLAB_CLIENT_ID": "gl-app-id", "SWITCHBOARD_GITLAB_CLIENT_SECRET": "gl-app-secret", "SWITCHBOARD_SANDBOX": "none"})
	w.fake.OAuthApp("gl-app-id", "gl-app-secret", w.app.ID, 0)

	w.comment(w.dev, "@"+gitlabApp+" before the install", "", 200)
	if got := w.srv.sessionsByKey(gitlabKey); len(got) != 0 {
		t.Fatalf("a mention before the install made sessions: %+v", got)
	}

	resp, err := http.Get(w.srv.url + "/oauth/gitlab/install")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Installed") {
		t.Fatalf("the install: %s\n%s", resp.Status, page)
	}

	w.ms.Push(modelserver.Step{Text: "Installed and answering."})
	w.comment(w.dev, "@"+gitlabApp+" are you there?", "", 200)
	w.appSaid("the answer after the install", "Installed and answering.")

	if err := w.srv.term(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	w.restart()
	w.ms.Push(modelserver.Step{Text: "Still answering after a restart."})
	w.comment(w.dev, "@"+gitlabApp+" and now?", "", 200)
	w.appSaid("the answer after a restart", "Still answering after a restart.")

	code, raw := w.srv.do("GET", "/v1/installations?provider=gitlab", nil)
	var list struct {
		Data []struct {
			ID       string            `json:"id"`
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	}
	if code != 200 || json.Unmarshal(raw, &list) != nil || len(list.Data) != 1 || list.Data[0].Metadata["mode"] != "oauth" || list.Data[0].Metadata["username"] != gitlabApp {
		t.Fatalf("installations: %d %s", code, raw)
	}
	if code, raw := w.srv.do("DELETE", "/v1/installations/"+list.Data[0].ID, nil); code/100 != 2 {
		t.Fatalf("delete the installation: %d %s", code, raw)
	}
	if got := w.fake.Revoked(); len(got) != 2 {
		t.Fatalf("revoked %d tokens at GitLab, want the refresh and the access token", len(got))
	}
}
