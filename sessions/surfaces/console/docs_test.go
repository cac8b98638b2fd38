package console_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/docs"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// docsMux serves the repository's docs as the gateway does.
func docsMux(t *testing.T) *http.ServeMux {
	t.Helper()
	h, err := console.New(newFakeStore(), console.Config{AdminToken: token, Platforms: shipped(nil)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.RegisterDocs(mux, docs.Files())
	return mux
}

// TestDocs: the docs are served rendered, in the console's frame and
// under its CSP, with the links between pages as written, headings that
// anchors find, pictures served, links out of the docs unlinked, and a
// page that does not exist a 404.
func TestDocs(t *testing.T) {
	mux := docsMux(t)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	for _, tt := range []struct {
		path, want string
		code       int
		lacks      []string
	}{
		{"/docs/", `<a href="console.md">`, 200, nil},
		{"/docs/console.md", `<link rel="stylesheet" href="../console/assets/console.css">`, 200, []string{"raw HTML omitted"}},
		{"/docs/console.md", `<img src="images/overview-1440.png"`, 200, nil},
		{"/docs/api.md", `<h2 id="events">`, 200, nil},
		{"/docs/sandbox.md", `<table>`, 200, nil},
		{"/docs/deploy.md", `deploy/switchboard.service in the source repository`, 200, []string{`href="../deploy/`}},
		{"/docs/nothing.md", "There is no documentation page nothing.md", 404, nil},
		{"/docs/docs.go", "There is no documentation page", 404, nil},
	} {
		t.Run(tt.path, func(t *testing.T) {
			rec := get(tt.path)
			body := rec.Body.String()
			if rec.Code != tt.code || !strings.Contains(body, tt.want) {
				t.Fatalf("%d, want %d with %s:\n%.2000s", rec.Code, tt.code, tt.want, body)
			}
			for _, bad := range tt.lacks {
				if strings.Contains(body, bad) {
					t.Errorf("the page holds %s", bad)
				}
			}
			if rec.Header().Get("Content-Security-Policy") != wantCSP {
				t.Errorf("CSP %q", rec.Header().Get("Content-Security-Policy"))
			}
		})
	}
	if rec := get("/docs/images/session-375.png"); rec.Code != 200 || rec.Header().Get("Content-Type") != "image/png" {
		t.Errorf("a picture: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec := get("/docs/images/none.png"); rec.Code != 404 {
		t.Errorf("a missing picture: %d", rec.Code)
	}
}

// TestDocReferences: every docs/ page the console's templates and
// platforms name, and every link to the docs in the templates, is a page
// the gateway serves.
func TestDocReferences(t *testing.T) {
	mux := docsMux(t)
	named := regexp.MustCompile(`docs/[a-z0-9-]+\.md`)
	refs := map[string]string{}
	files, _ := filepath.Glob("templates/*.html")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllString(string(raw), -1) {
			refs[m] = f
		}
	}
	for _, p := range shipped(nil) {
		refs[p.Docs] = "platform " + p.Name
	}
	if len(refs) < 3 {
		t.Fatalf("found only %v: the pattern no longer finds the references", refs)
	}
	for ref, where := range refs {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/"+ref, nil))
		if rec.Code != 200 {
			t.Errorf("%s names %s, which is %d", where, ref, rec.Code)
		}
	}
}
