package memory_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

var admin = &core.Principal{Admin: true}

type api struct {
	t      *testing.T
	stores core.MemoryStores
	mux    *http.ServeMux
}

func newAPI(t *testing.T, stores core.MemoryStores) *api {
	a := &api{t: t, stores: stores, mux: http.NewServeMux()}
	(&memory.Handler{Stores: a.stores}).Register(a.mux)
	return a
}

// call serves one request as p (nil: unauthenticated); body is a string
// sent as is, or a value sent as JSON.
func (a *api) call(p *core.Principal, method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequestWithContext(a.t.Context(), method, path, rd)
	if p != nil {
		req = req.WithContext(core.WithPrincipal(req.Context(), *p))
	}
	rec := httptest.NewRecorder()
	a.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// want calls as admin, checks the status and decodes the answer into out.
func (a *api) want(status int, method, path string, body, out any) []byte {
	a.t.Helper()
	code, raw := a.call(admin, method, path, body)
	if code != status {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, code, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return raw
}

// refusal is a request answered with an error whose body holds want.
type refusal struct {
	name, method, path string
	body               any
	status             int
	want               string
}

func (a *api) refusals(t *testing.T, tests []refusal) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := *a
			sub.t = t
			raw := sub.want(tt.status, tt.method, tt.path, tt.body, nil)
			if !strings.Contains(string(raw), tt.want) {
				t.Fatalf("answer %s lacks %s", raw, tt.want)
			}
		})
	}
}

func TestStoreRoundTrip(t *testing.T) { eachBackend(t, testStoreRoundTrip) }

func testStoreRoundTrip(t *testing.T, stores core.MemoryStores) {
	a := newAPI(t, stores)
	var m core.MemoryStore
	a.want(http.StatusCreated, "POST", "/v1/memory_stores",
		`{"name":"notes","description":"what we learned","shared":true,"limits":{"max_versions":5},"metadata":{"team":"infra"}}`, &m)
	if !core.HasPrefix(m.ID, core.PrefixMemoryStore) || m.Name != "notes" || m.Description != "what we learned" || !m.Shared ||
		m.Limits.MaxVersions != 5 || m.Metadata["team"] != "infra" || m.CreatedAt.IsZero() {
		t.Fatalf("created %+v", m)
	}
	for _, ref := range []string{m.ID, "notes"} {
		var got core.MemoryStore
		a.want(http.StatusOK, "GET", "/v1/memory_stores/"+ref, nil, &got)
		if got.ID != m.ID {
			t.Fatalf("get %s: %+v", ref, got)
		}
	}
	var updated core.MemoryStore
	a.want(http.StatusOK, "POST", "/v1/memory_stores/"+m.ID, `{"description":"d2","shared":false,"limits":{"max_file_bytes":100}}`, &updated)
	if updated.Description != "d2" || updated.Shared || updated.Limits != (core.MemoryLimits{MaxFileBytes: 100}) || updated.Metadata["team"] != "infra" || updated.Name != "notes" {
		t.Fatalf("updated %+v", updated)
	}
	a.want(http.StatusCreated, "POST", "/v1/memory_stores", map[string]any{"name": "second"}, nil)
	var page web.Page[core.MemoryStore]
	a.want(http.StatusOK, "GET", "/v1/memory_stores?limit=1", nil, &page)
	if len(page.Data) != 1 || !page.HasMore {
		t.Fatalf("first page %+v", page)
	}
	var rest web.Page[core.MemoryStore]
	a.want(http.StatusOK, "GET", "/v1/memory_stores?limit=1&after="+page.Data[0].ID, nil, &rest)
	if len(rest.Data) != 1 || rest.HasMore || rest.Data[0].ID == page.Data[0].ID {
		t.Fatalf("second page %+v", rest)
	}
	a.want(http.StatusNoContent, "DELETE", "/v1/memory_stores/"+m.ID, nil, nil)
	a.want(http.StatusNotFound, "GET", "/v1/memory_stores/"+m.ID, nil, nil)
	a.want(http.StatusNotFound, "DELETE", "/v1/memory_stores/"+m.ID, nil, nil)
}

func TestStoreRefusals(t *testing.T) {
	a := newAPI(t, &fakememory.Stores{InUse: func(string) []string { return []string{"agt_1"} }})
	a.want(http.StatusCreated, "POST", "/v1/memory_stores", map[string]any{"name": "taken"}, nil)
	a.refusals(t, []refusal{
		{"no name", "POST", "/v1/memory_stores", `{"shared":true}`, 400, `field \"name\" is required`},
		{"a name with a slash", "POST", "/v1/memory_stores", `{"name":"a/b"}`, 400, `field \"name\" (\"a/b\")`},
		{"a name that is a dot path", "POST", "/v1/memory_stores", `{"name":".."}`, 400, `field \"name\"`},
		{"a negative limit", "POST", "/v1/memory_stores", `{"name":"x","limits":{"max_versions":-1}}`, 400, `field \"limits.max_versions\" is -1`},
		{"an unknown field", "POST", "/v1/memory_stores", `{"name":"x","size":1}`, 400, `unknown field \"size\"`},
		{"a name taken", "POST", "/v1/memory_stores", `{"name":"taken"}`, 409, "taken"},
		{"a rename", "POST", "/v1/memory_stores/taken", `{"name":"other"}`, 400, `field \"name\" cannot change`},
		{"an update of no store", "POST", "/v1/memory_stores/nope", `{"shared":true}`, 404, `memory store \"nope\" not found`},
		{"a delete while agents use it", "DELETE", "/v1/memory_stores/taken", nil, 409, "agt_1"},
	})
	var page web.Page[core.MemoryStore]
	a.want(http.StatusOK, "GET", "/v1/memory_stores", nil, &page)
	if len(page.Data) != 1 || page.Data[0].Name != "taken" {
		t.Fatalf("refused requests stored something: %+v", page.Data)
	}
}

func TestAdminOnly(t *testing.T) {
	a := newAPI(t, &fakememory.Stores{})
	m := newStore(t, a.stores, core.MemoryStore{Name: "notes", Shared: true})
	for _, p := range []*core.Principal{nil, {SessionID: "ses_1"}} {
		for _, rq := range [][2]string{
			{"POST", "/v1/memory_stores"}, {"GET", "/v1/memory_stores"}, {"GET", "/v1/memory_stores/" + m.ID},
			{"POST", "/v1/memory_stores/" + m.ID}, {"DELETE", "/v1/memory_stores/" + m.ID}, {"GET", "/v1/memory_stores/" + m.ID + "/tenants"},
			{"GET", "/v1/memory_stores/" + m.ID + "/files"}, {"GET", "/v1/memory_stores/" + m.ID + "/files/a.md"},
			{"GET", "/v1/memory_stores/" + m.ID + "/history/a.md"}, {"POST", "/v1/memory_stores/" + m.ID + "/revert"},
		} {
			if code, raw := a.call(p, rq[0], rq[1], `{"name":"x"}`); code != http.StatusUnauthorized {
				t.Errorf("%v %s %s: %d %s", p, rq[0], rq[1], code, raw)
			}
		}
	}
	if _, err := a.stores.GetMemoryStore(t.Context(), m.ID); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) { eachBackend(t, testFiles) }

func testFiles(t *testing.T, stores core.MemoryStores) {
	a := newAPI(t, stores)
	m := newStore(t, a.stores, core.MemoryStore{Name: "notes"})
	write := func(tenant, path, content, session string) {
		t.Helper()
		if _, err := a.stores.ChangeMemory(t.Context(), core.MemoryChange{Store: m.ID, Partition: tenant, Op: core.MemoryOpWrite, Path: path, Content: content, SessionID: session, TurnID: "trn_" + session}); err != nil {
			t.Fatal(err)
		}
	}
	write("slack:T1", "people/alice.md", "v1", "ses_1")
	write("slack:T1", "people/alice.md", "v2", "ses_2")
	write("slack:T1", "todo.md", "ship", "ses_1")
	write("github:acme/app", "repo.md", "go", "ses_3")
	base := "/v1/memory_stores/" + m.ID

	var tenants web.Page[string]
	a.want(http.StatusOK, "GET", base+"/tenants", nil, &tenants)
	if strings.Join(tenants.Data, " ") != "github:acme/app slack:T1" {
		t.Fatalf("tenants %v", tenants.Data)
	}
	var files web.Page[core.MemoryVersion]
	a.want(http.StatusOK, "GET", base+"/files?tenant=slack:T1", nil, &files)
	if len(files.Data) != 2 || files.Data[0].Path != "people/alice.md" || files.Data[0].Version != 2 || files.Data[0].Size != 2 || files.Data[0].Content != "" || files.Data[1].Path != "todo.md" {
		t.Fatalf("files %+v", files.Data)
	}
	var v core.MemoryVersion
	a.want(http.StatusOK, "GET", base+"/files/people/alice.md?tenant=slack:T1", nil, &v)
	if v.Content != "v2" || v.Version != 2 || v.SessionID != "ses_2" {
		t.Fatalf("latest %+v", v)
	}
	a.want(http.StatusOK, "GET", base+"/files/people/alice.md?tenant=slack:T1&version=1", nil, &v)
	if v.Content != "v1" || v.Version != 1 {
		t.Fatalf("version 1 %+v", v)
	}
	var history web.Page[core.MemoryVersion]
	a.want(http.StatusOK, "GET", base+"/history/people/alice.md?tenant=slack:T1", nil, &history)
	if len(history.Data) != 2 || history.Data[0].Version != 2 || history.Data[0].SessionID != "ses_2" || history.Data[0].TurnID != "trn_ses_2" || history.Data[1].Version != 1 || history.Data[0].Content != "" {
		t.Fatalf("history %+v", history.Data)
	}
	a.want(http.StatusOK, "POST", base+"/revert", map[string]any{"tenant": "slack:T1", "path": "people/alice.md", "version": 1}, &v)
	if v.Version != 3 || v.Op != core.MemoryOpRevert || v.By != "admin" {
		t.Fatalf("revert %+v", v)
	}
	a.want(http.StatusOK, "GET", base+"/files/people/alice.md?tenant=slack:T1", nil, &v)
	if v.Content != "v1" || v.Version != 3 {
		t.Fatalf("after revert %+v", v)
	}

	a.refusals(t, []refusal{
		{"files without a tenant", "GET", base + "/files", nil, 400, `tenant is required: memory store \"notes\" is not shared`},
		{"a file without a tenant", "GET", base + "/files/todo.md", nil, 400, "tenant is required"},
		{"history without a tenant", "GET", base + "/history/todo.md", nil, 400, "tenant is required"},
		{"revert without a tenant", "POST", base + "/revert", map[string]any{"path": "todo.md", "version": 1}, 400, "tenant is required"},
		{"another tenant's file", "GET", base + "/files/todo.md?tenant=github:acme/app", nil, 404, `memory file \"todo.md\" not found in tenant \"github:acme/app\"`},
		{"a version that is not there", "GET", base + "/files/todo.md?tenant=slack:T1&version=7", nil, 404, "has no version 7"},
		{"a bad version", "GET", base + "/files/todo.md?tenant=slack:T1&version=x", nil, 400, `version=\"x\"`},
		{"a bad path", "GET", base + "/files/a%5Cb?tenant=slack:T1", nil, 400, "backslashes"},
		{"history of no file", "GET", base + "/history/nope.md?tenant=slack:T1", nil, 404, `memory file \"nope.md\" not found`},
		{"a revert to no version", "POST", base + "/revert", map[string]any{"tenant": "slack:T1", "path": "todo.md", "version": 9}, 404, "has no version 9"},
		{"a revert without a version", "POST", base + "/revert", map[string]any{"tenant": "slack:T1", "path": "todo.md"}, 400, `field \"version\" is required`},
		{"a revert of a bad path", "POST", base + "/revert", map[string]any{"tenant": "slack:T1", "path": "../x", "version": 1}, 400, `field \"path\"`},
		{"files of no store", "GET", "/v1/memory_stores/nope/files?tenant=x", nil, 404, `memory store \"nope\" not found`},
	})
}

// TestSharedFiles: a shared store's files need no tenant.
func TestSharedFiles(t *testing.T) { eachBackend(t, testSharedFiles) }

func testSharedFiles(t *testing.T, stores core.MemoryStores) {
	a := newAPI(t, stores)
	m := newStore(t, a.stores, core.MemoryStore{Name: "team", Shared: true})
	seed(t, a.stores, m.ID, core.SharedPartition, map[string]string{"style.md": "tabs"})
	var files web.Page[core.MemoryVersion]
	a.want(http.StatusOK, "GET", "/v1/memory_stores/team/files", nil, &files)
	if len(files.Data) != 1 || files.Data[0].Path != "style.md" || files.Data[0].Partition != core.SharedPartition {
		t.Fatalf("files %+v", files.Data)
	}
	var v core.MemoryVersion
	a.want(http.StatusOK, "GET", "/v1/memory_stores/team/files/style.md", nil, &v)
	if v.Content != "tabs" {
		t.Fatalf("file %+v", v)
	}
}
