package main_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

var csrfInPage = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleCSRF is the CSRF token of the console page at u.
func consoleCSRF(t *testing.T, u string, c *http.Cookie) (string, string) {
	t.Helper()
	code, body := consoleGet(t, u, c)
	m := csrfInPage.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, CSRF found %v:\n%s", u, code, m != nil, body)
	}
	return m[1], body
}

// consoleUpload posts files to the console as a multipart form, each
// named field → [filename, content].
func consoleUpload(t *testing.T, u string, c *http.Cookie, csrf string, files ...[3]string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("csrf", csrf); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f[0], f[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, f[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", u, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(c)
	return consoleDo(t, req)
}

// TestConsoleSkillsUpload: a zip uploaded through the console's form is a
// skill the API lists; a folder uploaded on its page is its next version
// with the folder's paths; a SKILL.md without a description is refused
// with the API's words under the upload field, and nothing is stored.
func TestConsoleSkillsUpload(t *testing.T) {
	srv := startServer(t, t.TempDir(), nil)
	c := consoleSignIn(t, srv.url)
	csrf, body := consoleCSRF(t, srv.url+"/console/skills", c)
	if !strings.Contains(body, `id="no-skills"`) {
		t.Fatalf("the empty skills page lacks its empty state:\n%s", body)
	}

	zipped := skillZip(t, map[string]string{"SKILL.md": "---\nname: deploy\ndescription: Ship a release.\n---\nRun the release.\n"})
	code, body := consoleUpload(t, srv.url+"/console/skills", c, csrf, [3]string{"zip", "deploy.zip", string(zipped)})
	if code != http.StatusSeeOther {
		t.Fatalf("upload the zip: %d\n%s", code, body)
	}
	type skill struct {
		ID, Name, Description string
		Version               int
		Files                 []struct{ Path string }
	}
	list := listData[skill](srv, "/v1/skills")
	if len(list) != 1 || list[0].Name != "deploy" || list[0].Description != "Ship a release." || list[0].Version != 1 {
		t.Fatalf("GET /v1/skills after the upload: %+v", list)
	}
	id := list[0].ID

	code, body = consoleGet(t, srv.url+"/console/skills/"+id, c)
	if code != http.StatusOK || !strings.Contains(body, "Run the release.") {
		t.Fatalf("the skill's page: %d\n%s", code, body)
	}
	code, body = consoleUpload(t, srv.url+"/console/skills/"+id+"/versions", c, csrf,
		[3]string{"folder", "deploy/SKILL.md", "---\nname: deploy\ndescription: Ship a release, v2.\n---\nSee scripts.\n"},
		[3]string{"folder", "deploy/scripts/release.sh", "echo ship\n"})
	if code != http.StatusSeeOther {
		t.Fatalf("upload the folder: %d\n%s", code, body)
	}
	code, raw := srv.do("GET", "/v1/skills/deploy", nil)
	var v2 skill
	mustJSON(t, raw, &v2)
	if code != 200 || v2.Version != 2 || len(v2.Files) != 2 || v2.Files[1].Path != "scripts/release.sh" {
		t.Fatalf("the skill after the folder upload: %d %+v", code, v2)
	}

	bad := skillZip(t, map[string]string{"SKILL.md": "---\nname: other\n---\nNo description.\n"})
	code, body = consoleUpload(t, srv.url+"/console/skills", c, csrf, [3]string{"zip", "other.zip", string(bad)})
	if code != http.StatusBadRequest || !strings.Contains(body, `id="upload-error" role="alert">SKILL.md: field &#34;description&#34;`) {
		t.Fatalf("a refused upload: %d\n%s", code, body)
	}
	if list := listData[skill](srv, "/v1/skills"); len(list) != 1 {
		t.Fatalf("a refused upload stored a skill: %+v", list)
	}
}

// TestConsoleMemoryRevert: a session writes a memory file twice; the
// console shows both versions with the session that wrote them, and a
// revert to version 1 through its form makes version 1's content the
// file's latest, as the API shows it.
func TestConsoleMemoryRevert(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	if code, raw := srv.do("POST", "/v1/memory_stores", map[string]any{"name": "notes"}); code != 201 {
		t.Fatalf("create the memory store: %d %s", code, raw)
	}
	code, raw := srv.do("GET", "/v1/agents/default", nil)
	if code != 200 {
		t.Fatalf("the default agent: %d %s", code, raw)
	}
	var agent struct{ Version int }
	mustJSON(t, raw, &agent)
	if code, raw = srv.do("POST", "/v1/agents/default", map[string]any{"version": agent.Version, "memory_stores": []map[string]any{{"id": "notes"}}}); code != 200 {
		t.Fatalf("give the default agent the store: %d %s", code, raw)
	}
	memory := func(id string, input map[string]any) modelserver.ToolCall {
		return modelserver.ToolCall{ID: id, Name: "memory", Input: input}
	}
	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_create", map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": "Deploys go out on Tuesdays.\n"})}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_edit", map[string]any{"command": "str_replace", "path": "/memories/deploys.md", "old_str": "Tuesdays", "new_str": "Fridays"})}},
		modelserver.Step{Text: "Noted."},
	)
	writer := srv.createSession("remember when we deploy")
	srv.waitIdle(writer)

	c := consoleSignIn(t, srv.url)
	page := srv.url + "/console/memory/notes/file?" + url.Values{"tenant": {"api"}, "path": {"deploys.md"}}.Encode()
	csrf, body := consoleCSRF(t, page, c)
	for _, want := range []string{`id="revert-1"`, `<a href="../../sessions/` + writer + `">`, "Deploys go out on Fridays."} {
		if !strings.Contains(body, want) {
			t.Fatalf("the file's page lacks %q:\n%s", want, body)
		}
	}
	code, body = consolePost(t, srv.url+"/console/memory/notes/revert", c, url.Values{"csrf": {csrf}, "tenant": {"api"}, "path": {"deploys.md"}, "version": {"1"}})
	if code != http.StatusSeeOther {
		t.Fatalf("revert through the console: %d\n%s", code, body)
	}
	code, raw = srv.do("GET", "/v1/memory_stores/notes/files/deploys.md?tenant=api", nil)
	var latest struct {
		Version int
		Content string
		By      string
	}
	mustJSON(t, raw, &latest)
	if code != 200 || latest.Version != 3 || latest.Content != "Deploys go out on Tuesdays.\n" || latest.By != "admin" {
		t.Fatalf("the file after the revert: %d %s", code, raw)
	}
}
