package skills

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeskills"
)

func skillMD(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n# " + name + "\n"
}

// jsonUpload is a JSON upload of path/content pairs.
func jsonUpload(t *testing.T, kv ...string) []byte {
	t.Helper()
	files := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		files[kv[i]] = kv[i+1]
	}
	b, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tarGzUpload(t *testing.T, kv ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := 0; i < len(kv); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: kv[i], Mode: 0o755, Size: int64(len(kv[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(kv[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipUpload(t *testing.T, kv ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(kv); i += 2 {
		w, err := zw.Create(kv[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(kv[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// api serves the handlers over a fake store.
type api struct {
	t     *testing.T
	store *fakeskills.Store
	mux   *http.ServeMux
}

func newAPI(t *testing.T, maxBytes int64) *api {
	a := &api{t: t, store: fakeskills.New(), mux: http.NewServeMux()}
	(&Handler{Store: a.store, MaxBytes: maxBytes}).Register(a.mux)
	return a
}

// call serves one request as the admin (or as a session's client when
// admin is false) and returns the answer.
func (a *api) call(admin bool, method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	a.t.Helper()
	req := httptest.NewRequestWithContext(a.t.Context(), method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req = req.WithContext(core.WithPrincipal(req.Context(), core.Principal{Admin: admin}))
	rec := httptest.NewRecorder()
	a.mux.ServeHTTP(rec, req)
	return rec
}

// want calls as the admin, checks the status and the answer's text.
func (a *api) want(status int, method, path, contentType string, body []byte, has ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	rec := a.call(true, method, path, contentType, body)
	if rec.Code != status {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, rec.Code, rec.Body, status)
	}
	for _, h := range has {
		if !strings.Contains(rec.Body.String(), h) {
			a.t.Errorf("%s %s: answer lacks %q: %s", method, path, h, rec.Body)
		}
	}
	return rec
}

func decodeSkill(t *testing.T, rec *httptest.ResponseRecorder) core.Skill {
	t.Helper()
	var s core.Skill
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return s
}

func TestCreateForms(t *testing.T) {
	for _, tt := range []struct {
		name, contentType string
		body              func(t *testing.T, kv ...string) []byte
	}{
		{"json", "application/json", jsonUpload},
		{"tar.gz", "application/gzip", tarGzUpload},
		{"zip", "application/zip", zipUpload},
		{"zip sent as form data", "application/x-www-form-urlencoded", zipUpload},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAPI(t, 0)
			rec := a.want(http.StatusCreated, "POST", "/v1/skills", tt.contentType, tt.body(t, "SKILL.md", skillMD("deploy", "Ship a release."), "bin/run", "echo"))
			s := decodeSkill(t, rec)
			if s.Name != "deploy" || s.Description != "Ship a release." || s.Version != 1 || len(s.Files) != 2 || s.Files[0].Path != "SKILL.md" || s.Files[1].Path != "bin/run" || s.Size == 0 {
				t.Fatalf("created %+v", s)
			}
		})
	}
}

func TestUploadRefusals(t *testing.T) {
	a := newAPI(t, 4096)
	a.store.MustCreate("deploy", "d")
	for _, tt := range []struct {
		name, path string
		body       []byte
		status     int
		has        string
	}{
		{"bad manifest", "/v1/skills", jsonUpload(t, "SKILL.md", "---\nname: Deploy Now\ndescription: d\n---\n"), 400, `field \"name\"`},
		{"an entry out of the folder", "/v1/skills", jsonUpload(t, "SKILL.md", skillMD("x", "y"), "../up", "x"), 400, `entry \"../up\"`},
		{"name taken", "/v1/skills", jsonUpload(t, "SKILL.md", skillMD("deploy", "y")), 409, `a skill named \"deploy\" exists`},
		{"body over the limit", "/v1/skills", jsonUpload(t, "SKILL.md", skillMD("x", "y"), "big", strings.Repeat("x", 5000)), 413, "larger than 4096 bytes, the gateway's limit (SWITCHBOARD_SKILL_MAX_BYTES)"},
		{"files over the limit", "/v1/skills", tarGzUpload(t, "SKILL.md", skillMD("x", "y"), "big", strings.Repeat("x", 5000)), 400, `entry \"big\": the files exceed 4096 bytes uncompressed`},
		{"new version of no skill", "/v1/skills/nope/versions", jsonUpload(t, "SKILL.md", skillMD("x", "y")), 404, `skill \"nope\" not found`},
		{"version over the limit", "/v1/skills/deploy/versions", jsonUpload(t, "SKILL.md", skillMD("x", "y"), "big", strings.Repeat("x", 5000)), 413, "SWITCHBOARD_SKILL_MAX_BYTES"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a.want(tt.status, "POST", tt.path, "", tt.body, tt.has)
			if skills, versions := a.store.Count(); skills != 1 || versions != 1 {
				t.Fatal("a refused upload was stored")
			}
		})
	}
}

// TestUploadOverTheAPIBodyLimit: a skill is larger than the JSON bodies
// the other endpoints take; its own limit applies.
func TestUploadOverTheAPIBodyLimit(t *testing.T) {
	a := newAPI(t, 0)
	big := strings.Repeat("a line of reference text\n", 3<<20/25)
	s := decodeSkill(t, a.want(http.StatusCreated, "POST", "/v1/skills", "application/gzip", tarGzUpload(t, "SKILL.md", skillMD("big", "b"), "ref.txt", big)))
	if s.Size < 3<<20-100 {
		t.Fatalf("size %d", s.Size)
	}
}

func TestVersionsAndReads(t *testing.T) {
	a := newAPI(t, 0)
	v1 := decodeSkill(t, a.want(201, "POST", "/v1/skills", "application/json", jsonUpload(t, "SKILL.md", skillMD("deploy", "one"), "ref.md", "# Ref")))
	v2 := decodeSkill(t, a.want(201, "POST", "/v1/skills/deploy/versions", "application/gzip", tarGzUpload(t, "SKILL.md", skillMD("deploy", "two"), "logo.png", "\x89PNG\r\n\x1a\n\x00\x00", "page.html", "<html><script>x</script>", "data.bin", "\x00\x01\x02")))
	if v2.ID != v1.ID || v2.Version != 2 || len(v2.Files) != 4 {
		t.Fatalf("version 2: %+v", v2)
	}
	a.want(200, "GET", "/v1/skills/"+v1.ID, "", nil, `"description":"two"`, `"version":2`)
	a.want(200, "GET", "/v1/skills/deploy?version=1", "", nil, `"description":"one"`, `"version":1`, `"path":"ref.md"`)
	a.want(404, "GET", "/v1/skills/deploy?version=3", "", nil, `skill \"deploy\" has no version 3`)
	a.want(400, "GET", "/v1/skills/deploy?version=zero", "", nil, `version=\"zero\": want a whole number`)
	a.want(404, "GET", "/v1/skills/nope", "", nil, `skill \"nope\" not found`)

	for _, tt := range []struct {
		path, contentType, body string
	}{
		{"/v1/skills/deploy/files/SKILL.md", "text/markdown; charset=utf-8", skillMD("deploy", "two")},
		{"/v1/skills/deploy/files/ref.md?version=1", "text/markdown; charset=utf-8", "# Ref"},
		{"/v1/skills/" + v1.ID + "/files/logo.png", "image/png", "\x89PNG\r\n\x1a\n\x00\x00"},
		{"/v1/skills/deploy/files/page.html", "text/plain; charset=utf-8", "<html><script>x</script>"},
		{"/v1/skills/deploy/files/data.bin", "application/octet-stream", "\x00\x01\x02"},
	} {
		rec := a.want(200, "GET", tt.path, "", nil)
		if got := rec.Header().Get("Content-Type"); got != tt.contentType || rec.Body.String() != tt.body || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %q %q", tt.path, got, rec.Body)
		}
	}
	a.want(404, "GET", "/v1/skills/deploy/files/ref.md", "", nil, `skill \"deploy\" version 2 has no file \"ref.md\"; it has \"SKILL.md\", \"data.bin\"`)
	a.want(404, "GET", "/v1/skills/deploy/files/ref.md?version=7", "", nil, "has no version 7")
}

func TestList(t *testing.T) {
	a := newAPI(t, 0)
	a.want(200, "GET", "/v1/skills", "", nil, `{"data":[],"has_more":false}`)
	for _, n := range []string{"a", "b", "c"} {
		a.store.MustCreate(n, n)
	}
	var page struct {
		Data    []core.Skill `json:"data"`
		HasMore bool         `json:"has_more"`
	}
	if err := json.Unmarshal(a.want(200, "GET", "/v1/skills?limit=2", "", nil).Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || !page.HasMore || page.Data[0].Name != "a" {
		t.Fatalf("first page %+v", page)
	}
	a.want(200, "GET", "/v1/skills?after="+page.Data[1].ID, "", nil, `"name":"c"`, `"has_more":false`)
	a.want(400, "GET", "/v1/skills?limit=0", "", nil, "limit")
}

func TestDelete(t *testing.T) {
	a := newAPI(t, 0)
	pinned := a.store.MustCreate("pinned", "p")
	a.store.Pin(pinned.ID, `agent "triage" (agt_1)`)
	a.store.MustCreate("loose", "l")
	a.want(409, "DELETE", "/v1/skills/pinned", "", nil, `skill \"pinned\" is pinned by agent \"triage\" (agt_1)`)
	a.want(204, "DELETE", "/v1/skills/loose", "", nil)
	a.want(404, "GET", "/v1/skills/loose", "", nil)
	a.want(404, "DELETE", "/v1/skills/loose", "", nil, `skill \"loose\" not found`)
}

func TestAdminOnly(t *testing.T) {
	a := newAPI(t, 0)
	for _, r := range [][2]string{{"POST", "/v1/skills"}, {"GET", "/v1/skills"}, {"GET", "/v1/skills/x"}, {"POST", "/v1/skills/x/versions"}, {"GET", "/v1/skills/x/files/SKILL.md"}, {"DELETE", "/v1/skills/x"}} {
		if rec := a.call(false, r[0], r[1], "application/json", jsonUpload(t, "SKILL.md", skillMD("x", "y"))); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s %s as a session client = %d", r[0], r[1], rec.Code)
		}
	}
	if skills, _ := a.store.Count(); skills != 0 {
		t.Fatal("stored without the admin token")
	}
}
