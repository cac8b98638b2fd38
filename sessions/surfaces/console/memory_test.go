package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

// fakeMemory is the /v1/memory_stores endpoints the memory pages call,
// answering as the API does; it keeps the reverts and creations posted.
type fakeMemory struct {
	mu      sync.Mutex
	reverts []memory.RevertBody
	created []memory.StoreParams
}

func newFakeMemory(e *env) *fakeMemory {
	f := &fakeMemory{}
	at := core.NewTime(time.Date(2030, 5, 6, 7, 0, 0, 0, time.UTC))
	store := core.MemoryStore{ID: "mem_1", Name: "notes", Description: "What we learned", CreatedAt: at, UpdatedAt: at}
	versions := []core.MemoryVersion{ // newest first
		{Store: "mem_1", Partition: "slack:T1", Path: "people/alice.md", Version: 3, Op: "revert", Size: 9, By: "admin", CreatedAt: at},
		{Store: "mem_1", Partition: "slack:T1", Path: "people/alice.md", Version: 2, Op: "write", Size: 12, SessionID: "ses_2", TurnID: "trn_2", CreatedAt: at},
		{Store: "mem_1", Partition: "slack:T1", Path: "people/alice.md", Version: 1, Op: "write", Size: 9, SessionID: "ses_1", TurnID: "trn_1", CreatedAt: at},
	}
	content := map[string]string{"1": "likes <tea>", "2": "likes coffee", "3": "likes <tea>", "": "likes <tea>"}
	page := func(w http.ResponseWriter, data any) {
		web.WriteJSON(w, http.StatusOK, map[string]any{"data": data, "has_more": false})
	}
	e.api.HandleFunc("GET /v1/memory_stores", func(w http.ResponseWriter, r *http.Request) { page(w, []core.MemoryStore{store}) })
	e.api.HandleFunc("POST /v1/memory_stores", func(w http.ResponseWriter, r *http.Request) {
		var b memory.StoreParams
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.created = append(f.created, b)
		f.mu.Unlock()
		if b.Name == nil || strings.Contains(*b.Name, " ") {
			apiError(w, http.StatusBadRequest, "invalid_request", `field "name" ("a b"): want letters and digits`)
			return
		}
		web.WriteJSON(w, http.StatusCreated, core.MemoryStore{ID: "mem_new", Name: *b.Name})
	})
	e.api.HandleFunc("GET /v1/memory_stores/{id}", func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id != "mem_1" && id != "notes" {
			apiError(w, http.StatusNotFound, "not_found", `memory store "`+id+`" not found`)
			return
		}
		web.WriteJSON(w, http.StatusOK, store)
	})
	e.api.HandleFunc("GET /v1/memory_stores/{id}/tenants", func(w http.ResponseWriter, r *http.Request) { page(w, []string{"slack:T1"}) })
	e.api.HandleFunc("GET /v1/memory_stores/{id}/files", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("tenant") != "slack:T1" {
			page(w, []core.MemoryVersion{})
			return
		}
		page(w, versions[:1])
	})
	e.api.HandleFunc("GET /v1/memory_stores/{id}/history/{path...}", func(w http.ResponseWriter, r *http.Request) { page(w, versions) })
	e.api.HandleFunc("GET /v1/memory_stores/{id}/files/{path...}", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("version")
		for _, mv := range versions {
			if v == "" || mv.Version == int(v[0]-'0') {
				mv.Content = content[v]
				web.WriteJSON(w, http.StatusOK, mv)
				return
			}
		}
		apiError(w, http.StatusNotFound, "not_found", "no such version")
	})
	e.api.HandleFunc("POST /v1/memory_stores/{id}/revert", func(w http.ResponseWriter, r *http.Request) {
		var b memory.RevertBody
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.reverts = append(f.reverts, b)
		f.mu.Unlock()
		if b.Version == 9 {
			apiError(w, http.StatusNotFound, "not_found", `memory file "people/alice.md" has no version 9 in tenant "slack:T1"`)
			return
		}
		web.WriteJSON(w, http.StatusOK, core.MemoryVersion{Store: "mem_1", Partition: b.Tenant, Path: b.Path, Version: 4, Op: "revert"})
	})
	return f
}

func (f *fakeMemory) posted() ([]memory.RevertBody, []memory.StoreParams) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]memory.RevertBody(nil), f.reverts...), append([]memory.StoreParams(nil), f.created...)
}

func TestMemoryPages(t *testing.T) {
	e := newEnv(t, "")
	newFakeMemory(e)
	c, _ := e.signIn()
	tests := []pageCase{
		{"stores", "/console/memory", []string{`<a href="memory/mem_1">notes</a>`, `id="memory-store-create"`, `name="name"`}},
		{"a store and its tenants", "/console/memory/mem_1", []string{
			`<h1 id="store-name">notes</h1>`, `href="../memory/mem_1/files?tenant=slack%3AT1"`, `id="memory-store-edit"`,
			`value="What we learned"`, `href="../memory/mem_1/delete"`,
		}},
		{"a partition's files", "/console/memory/mem_1/files?tenant=slack:T1", []string{
			`href="../../memory/mem_1/file?path=people%2Falice.md&amp;tenant=slack%3AT1"`, "admin",
		}},
		{"a file's versions and the latest content", "/console/memory/mem_1/file?tenant=slack:T1&path=people/alice.md", []string{
			`<a href="../../sessions/ses_2"><code>ses_2</code></a>`, `turn <code>trn_2</code>`,
			`id="revert-1"`, `id="revert-2"`, `name="version" value="1"`, `action="../../memory/mem_1/revert"`,
			`<pre class="file" id="memory-content" aria-labelledby="content-heading">likes &lt;tea&gt;</pre>`,
		}},
		{"an earlier version's content", "/console/memory/mem_1/file?tenant=slack:T1&path=people/alice.md&version=2", []string{
			`id="memory-content" aria-labelledby="content-heading">likes coffee</pre>`,
		}},
	}
	checkPages(t, e, c, tests)
	if body := e.do(req{method: "GET", path: "/console/memory/mem_1/file?tenant=slack:T1&path=people/alice.md", cookie: c}).Body.String(); strings.Contains(body, `id="revert-3"`) {
		t.Error("the latest version offers a revert to itself")
	}
	if rec := e.do(req{method: "GET", path: "/console/memory/nope", cookie: c}); rec.Code != http.StatusNotFound {
		t.Errorf("an unknown store: %d, want 404", rec.Code)
	}
}

func TestMemoryRevert(t *testing.T) {
	revert := func(csrf, version string) url.Values {
		v := url.Values{"tenant": {"slack:T1"}, "path": {"people/alice.md"}, "version": {version}}
		if csrf != "" {
			v.Set("csrf", csrf)
		}
		return v
	}
	tests := []struct {
		name     string
		noCSRF   bool
		version  string
		wantCode int
		want     []memory.RevertBody
		wantBody string
	}{
		{name: "posts the version chosen", version: "1", wantCode: http.StatusSeeOther,
			want: []memory.RevertBody{{Tenant: "slack:T1", Path: "people/alice.md", Version: 1}}},
		{name: "a refusal is shown on the file's page", version: "9", wantCode: http.StatusNotFound,
			want:     []memory.RevertBody{{Tenant: "slack:T1", Path: "people/alice.md", Version: 9}},
			wantBody: `has no version 9 in tenant &#34;slack:T1&#34;`},
		{name: "without CSRF nothing is posted", noCSRF: true, version: "1", wantCode: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			f := newFakeMemory(e)
			c, csrf := e.signIn()
			if tc.noCSRF {
				csrf = ""
			}
			rec := e.do(req{method: "POST", path: "/console/memory/mem_1/revert", cookie: c, form: revert(csrf, tc.version)})
			if rec.Code != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			got, _ := f.posted()
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Fatalf("posted %+v, want %+v", got, tc.want)
			}
			if tc.wantCode == http.StatusSeeOther {
				if loc := rec.Header().Get("Location"); loc != "../../memory/mem_1/file?path=people%2Falice.md&tenant=slack%3AT1" {
					t.Errorf("redirected to %q", loc)
				}
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("the page lacks %q:\n%s", tc.wantBody, rec.Body)
			}
		})
	}
}

func TestMemoryStoreCreate(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeMemory(e)
	c, csrf := e.signIn()
	rec := e.do(req{method: "POST", path: "/console/memory", cookie: c, form: url.Values{"csrf": {csrf}, "name": {"a b"}, "description": {"kept"}, "shared": {"on"}}})
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, `<p class="field-error" id="store-name-error" role="alert">field &#34;name&#34;`) ||
		!strings.Contains(body, `value="kept"`) || !strings.Contains(body, `id="store-shared" name="shared" type="checkbox" checked`) {
		t.Fatalf("a refused name: %d %s", rec.Code, body)
	}
	rec = e.do(req{method: "POST", path: "/console/memory", cookie: c, form: url.Values{"csrf": {csrf}, "name": {"team"}, "shared": {"on"}}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "memory/mem_new" {
		t.Fatalf("create: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	_, created := f.posted()
	if len(created) != 2 || *created[1].Name != "team" || created[1].Shared == nil || !*created[1].Shared {
		t.Fatalf("posted %+v", created)
	}
}
