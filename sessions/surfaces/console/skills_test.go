package console_test

import (
	"archive/zip"
	"bytes"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// fakeSkills is the /v1/skills and /v1/agents endpoints the skill pages
// call, answering as the API does; it keeps the uploads it was sent.
type fakeSkills struct {
	mu      sync.Mutex
	uploads []skillUpload
	skills  []core.Skill
	agents  []core.Agent
	files   map[string]string // path → content of the latest version
}

// skillUpload is one body POSTed to the fake.
type skillUpload struct {
	path, contentType string
	body              []byte
}

func newFakeSkills(e *env) *fakeSkills {
	at := core.NewTime(time.Date(2030, 5, 6, 7, 0, 0, 0, time.UTC))
	f := &fakeSkills{
		skills: []core.Skill{{ID: "skl_1", Name: "deploy", Description: "Ship a release.", Version: 2, Size: 40,
			Files: []core.SkillFile{{Path: "SKILL.md", Size: 30}, {Path: "logo.png", Size: 4}}, CreatedAt: at, UpdatedAt: at}},
		agents: []core.Agent{{ID: "agt_ops", Name: "ops", Version: 3, Skills: []core.SkillRef{{ID: "skl_1", Version: 1}}}},
		files:  map[string]string{"SKILL.md": "---\nname: deploy\n---\nRun <release.sh>.\n", "logo.png": "\x89PNG\xff\xfe"},
	}
	upload := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.uploads = append(f.uploads, skillUpload{r.URL.Path, r.Header.Get("Content-Type"), b})
		f.mu.Unlock()
		if refused(b) {
			apiError(w, http.StatusBadRequest, "invalid_request", `SKILL.md: field "description" is required`)
			return
		}
		web.WriteJSON(w, http.StatusCreated, core.Skill{ID: "skl_new", Name: "new", Version: 1})
	}
	e.api.HandleFunc("POST /v1/skills", upload)
	e.api.HandleFunc("POST /v1/skills/{id}/versions", upload)
	e.api.HandleFunc("GET /v1/skills", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"data": f.skills, "has_more": false})
	})
	e.api.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"data": f.agents, "has_more": false})
	})
	e.api.HandleFunc("GET /v1/skills/{id}", func(w http.ResponseWriter, r *http.Request) {
		for _, s := range f.skills {
			if s.ID == r.PathValue("id") || s.Name == r.PathValue("id") {
				if v := r.URL.Query().Get("version"); v != "" {
					s.Version = int(v[0] - '0')
				}
				web.WriteJSON(w, http.StatusOK, s)
				return
			}
		}
		apiError(w, http.StatusNotFound, "not_found", `skill "`+r.PathValue("id")+`" not found`)
	})
	e.api.HandleFunc("GET /v1/skills/{id}/files/{path...}", func(w http.ResponseWriter, r *http.Request) {
		c, ok := f.files[r.PathValue("path")]
		if !ok {
			apiError(w, http.StatusNotFound, "not_found", "no file "+r.PathValue("path"))
			return
		}
		_, _ = io.WriteString(w, c)
	})
	e.api.HandleFunc("DELETE /v1/skills/{id}", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusConflict, "conflict", `skill "deploy" is pinned by agent "ops"`)
	})
	return f
}

// refused reports whether an upload's zip holds a file that says
// "refuse me", which the fake refuses as the API refuses bad front matter.
func refused(b []byte) bool {
	files, err := zipEntries(b)
	if err != nil {
		return false
	}
	for _, c := range files {
		if strings.Contains(c, "refuse me") {
			return true
		}
	}
	return false
}

func (f *fakeSkills) sent() []skillUpload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.uploads)
}

// part is one file of a multipart form.
type part struct{ field, filename, content string }

// upload posts a multipart form to the console, csrf in it unless empty.
func (e *env) upload(path string, c *http.Cookie, csrf string, parts ...part) *httptest.ResponseRecorder {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if csrf != "" {
		_ = mw.WriteField("csrf", csrf)
	}
	for _, p := range parts {
		fw, err := mw.CreateFormFile(p.field, p.filename)
		if err != nil {
			e.t.Fatal(err)
		}
		_, _ = io.WriteString(fw, p.content)
	}
	if err := mw.Close(); err != nil {
		e.t.Fatal(err)
	}
	hr := httptest.NewRequest("POST", path, &buf)
	hr.Header.Set("Content-Type", mw.FormDataContentType())
	hr.RemoteAddr = "192.0.2.1:40000"
	hr.AddCookie(c)
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, hr)
	checkHeaders(e.t, "POST "+path, rec.Result())
	return rec
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, text := range files {
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(f, text)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipEntries is a zip's entries by name.
func zipEntries(b []byte) (map[string]string, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		c, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[f.Name] = string(c)
	}
	return out, nil
}

func TestSkillUpload(t *testing.T) {
	manifest := "---\nname: deploy\ndescription: Ship it.\n---\nGo.\n"
	zipped := zipOf(t, map[string]string{"deploy/SKILL.md": manifest})
	tests := []struct {
		name      string
		path      string
		parts     []part
		wantCode  int
		wantPath  string // the API path posted to, "" when nothing is
		wantFiles map[string]string
		wantBody  []byte
		wantError string
	}{
		{
			name: "a folder reaches the API as one zip with the relative paths", path: "/console/skills",
			parts:    []part{{"folder", "deploy/SKILL.md", manifest}, {"folder", "deploy/scripts/release.sh", "echo ship\n"}},
			wantCode: http.StatusSeeOther, wantPath: "/v1/skills",
			wantFiles: map[string]string{"deploy/SKILL.md": manifest, "deploy/scripts/release.sh": "echo ship\n"},
		},
		{
			name: "a zip passes through", path: "/console/skills",
			parts:    []part{{"zip", "deploy.zip", string(zipped)}, {"folder", "", ""}},
			wantCode: http.StatusSeeOther, wantPath: "/v1/skills", wantBody: zipped,
		},
		{
			name: "a new version", path: "/console/skills/skl_1/versions",
			parts:    []part{{"zip", "deploy.zip", string(zipped)}},
			wantCode: http.StatusSeeOther, wantPath: "/v1/skills/skl_1/versions", wantBody: zipped,
		},
		{
			name: "the API's refusal shows under the upload field", path: "/console/skills",
			parts:    []part{{"folder", "deploy/SKILL.md", "---\nname: deploy\n---\nrefuse me\n"}},
			wantCode: http.StatusBadRequest, wantPath: "/v1/skills",
			wantError: `SKILL.md: field &#34;description&#34; is required`,
		},
		{
			name: "a refused new version shows under its upload field", path: "/console/skills/skl_1/versions",
			parts:    []part{{"folder", "deploy/SKILL.md", "refuse me"}},
			wantCode: http.StatusBadRequest, wantPath: "/v1/skills/skl_1/versions",
			wantError: `SKILL.md: field &#34;description&#34; is required`,
		},
		{
			name: "nothing chosen", path: "/console/skills",
			parts:    []part{{"zip", "", ""}, {"folder", "", ""}},
			wantCode: http.StatusBadRequest, wantError: "Choose a zip of the skill&#39;s folder, or the folder itself",
		},
		{
			name: "both chosen", path: "/console/skills",
			parts:    []part{{"zip", "deploy.zip", string(zipped)}, {"folder", "deploy/SKILL.md", manifest}},
			wantCode: http.StatusBadRequest, wantError: "Choose a zip or a folder, not both.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			f := newFakeSkills(e)
			c, csrf := e.signIn()
			rec := e.upload(tc.path, c, csrf, tc.parts...)
			if rec.Code != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			sent := f.sent()
			if tc.wantPath == "" {
				if len(sent) != 0 {
					t.Fatalf("posted %d uploads, want none", len(sent))
				}
			} else if len(sent) != 1 || sent[0].path != tc.wantPath || sent[0].contentType != "application/zip" {
				t.Fatalf("posted %+v, want one zip to %s", sent, tc.wantPath)
			}
			if tc.wantFiles != nil {
				got, err := zipEntries(sent[0].body)
				if err != nil || !maps.Equal(got, tc.wantFiles) {
					t.Errorf("the zip holds %q (%v), want %q", got, err, tc.wantFiles)
				}
			}
			if tc.wantBody != nil && !bytes.Equal(sent[0].body, tc.wantBody) {
				t.Error("the zip was not passed as it is")
			}
			if tc.wantCode == http.StatusSeeOther {
				if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, "skills/skl_new") || strings.HasPrefix(loc, "/") {
					t.Errorf("redirected to %q", loc)
				}
				return
			}
			body := rec.Body.String()
			want := `<p class="field-error" id="upload-error" role="alert">` + tc.wantError
			if !strings.Contains(body, want) || !strings.Contains(body, `aria-describedby="upload-help upload-error"`) {
				t.Errorf("the page lacks %q under the upload field:\n%s", want, body)
			}
		})
	}
}

func TestSkillUploadWithoutCSRF(t *testing.T) {
	for _, path := range []string{"/console/skills", "/console/skills/skl_1/versions"} {
		t.Run(path, func(t *testing.T) {
			e := newEnv(t, "")
			f := newFakeSkills(e)
			c, _ := e.signIn()
			rec := e.upload(path, c, "", part{"folder", "deploy/SKILL.md", "x"})
			if rec.Code != http.StatusForbidden || len(f.sent()) != 0 {
				t.Fatalf("status %d with %d uploads posted, want 403 and none", rec.Code, len(f.sent()))
			}
		})
	}
}

func TestSkillPages(t *testing.T) {
	e := newEnv(t, "")
	newFakeSkills(e)
	c, csrf := e.signIn()
	tests := []pageCase{
		{"list with pins", "/console/skills", []string{
			`<a href="skills/skl_1">deploy</a>`, `<a href="agents/agt_ops">ops</a> (v1)`, "v2", `id="skill-upload"`,
			`action="skills" enctype="multipart/form-data"`, `name="folder" type="file" webkitdirectory multiple`,
		}},
		{"a skill shows SKILL.md as text", "/console/skills/skl_1", []string{
			`<h1 id="skill-name">deploy</h1>`, `<a href="../agents/agt_ops">ops</a> pins v1`,
			`Run &lt;release.sh&gt;.`, `id="file-content"`, `href="../skills/skl_1?file=SKILL.md&amp;version=1"`,
			`action="../skills/skl_1/versions"`, `href="../skills/skl_1/delete"`, "Upload version 3",
		}},
		{"a binary file is not shown", "/console/skills/skl_1?file=logo.png", []string{`id="file-binary"`}},
		{"the delete confirmation", "/console/skills/skl_1/delete", []string{`id="skill-delete-form"`, `action="../../skills/skl_1/delete"`, `id="confirm-delete"`}},
	}
	checkPages(t, e, c, tests)
	if rec := e.do(req{method: "GET", path: "/console/skills/nope", cookie: c}); rec.Code != http.StatusNotFound {
		t.Errorf("an unknown skill: %d, want 404", rec.Code)
	}
	// A refused delete says why on the confirmation.
	rec := e.do(req{method: "POST", path: "/console/skills/skl_1/delete", cookie: c, form: map[string][]string{"csrf": {csrf}}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `is pinned by agent &#34;ops&#34;`) {
		t.Errorf("a refused delete: %d %s", rec.Code, rec.Body)
	}
}

// pageCase is a console page and what it must hold.
type pageCase struct {
	name, path string
	want       []string
}

// checkPages gets each page signed in with c and checks it holds its
// wants.
func checkPages(t *testing.T, e *env, c *http.Cookie, tests []pageCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(req{method: "GET", path: tc.path, cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			for _, want := range tc.want {
				if !strings.Contains(rec.Body.String(), want) {
					t.Errorf("the page lacks %q", want)
				}
			}
		})
	}
}
