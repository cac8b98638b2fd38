package environments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

type images map[string]bool

func (i images) CheckImage(_ context.Context, ref string) error {
	if !i[ref] {
		return fmt.Errorf("image %q is not in the Docker engine", ref)
	}
	return nil
}

func setup(t *testing.T) (*http.ServeMux, *bolt.Store, string) {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	v, err := store.CreateVault(t.Context(), &core.Vault{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	cred := &core.Credential{ID: core.NewID(core.PrefixCredential), VaultID: v.ID, Name: "gh", Kind: core.CredentialStaticBearer, Hosts: []string{"api.github.com"}}
	if _, err := store.PutCredential(t.Context(), cred, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	(&Handler{Store: store, Images: images{"switchboard-sandbox:latest": true}, Credentials: store}).Register(mux)
	return mux, store, cred.ID
}

func call(t *testing.T, mux *http.ServeMux, admin bool, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if admin {
		req = req.WithContext(core.WithPrincipal(req.Context(), core.Principal{Admin: true}))
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	var out map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON", method, path, rec.Code, rec.Body.String())
		}
	}
	return rec.Code, out
}

func TestEnvironmentsAPI(t *testing.T) {
	mux, _, cred := setup(t)
	full := fmt.Sprintf(`{"name":"tools","image":"switchboard-sandbox:latest","packages":{"apt":["jq"]},
		"env":{"A":"1"},"network":{"mode":"allowlist","allowed_hosts":["api.github.com"]},"credentials":[%q],
		"resources":{"cpus":0.5,"memory_mb":512,"pids":128,"disk_mb":256},"idle_timeout_seconds":120}`, cred)
	code, created := call(t, mux, true, "POST", "/v1/environments", full)
	if code != 201 || !core.HasPrefix(fmt.Sprint(created["id"]), core.PrefixEnvironment) {
		t.Fatalf("create: %d %v", code, created)
	}
	id := created["id"].(string)

	cases := []struct {
		name, method, path, body string
		admin                    bool
		code                     int
		want                     string // in the answer's JSON
	}{
		{"get by id", "GET", "/v1/environments/" + id, "", true, 200, `"name":"tools"`},
		{"get by name", "GET", "/v1/environments/tools", "", true, 200, `"allowed_hosts":["api.github.com"]`},
		{"list", "GET", "/v1/environments?limit=10", "", true, 200, `"has_more":false`},
		{"not admin", "GET", "/v1/environments", "", false, 401, "admin token"},
		{"missing", "GET", "/v1/environments/nothing", "", true, 404, `environment \"nothing\" not found`},
		{"no name", "POST", "/v1/environments", `{}`, true, 400, `field \"name\" is required`},
		{"unknown field", "POST", "/v1/environments", `{"name":"x","secrets":{}}`, true, 400, "unknown field"},
		{"unknown nested field", "POST", "/v1/environments", `{"name":"x","network":{"mode":"none","ports":[1]}}`, true, 400, "unknown field"},
		{"duplicate name", "POST", "/v1/environments", `{"name":"tools"}`, true, 409, "taken"},
		{"image missing", "POST", "/v1/environments", `{"name":"x","image":"nope:1"}`, true, 400, "not in the Docker engine"},
		{"credential missing", "POST", "/v1/environments", `{"name":"x","network":{"mode":"allowlist","allowed_hosts":["a.example"]},"credentials":["vcr_00000000000000000000000000"]}`, true, 400, "no vault credential"},
		{"bad package", "POST", "/v1/environments", `{"name":"x","packages":{"apt":["-o=evil"]}}`, true, 400, "packages.apt[0]"},
		{"reserved variable", "POST", "/v1/environments", `{"name":"x","env":{"HTTPS_PROXY":"x"}}`, true, 400, "set by the sandbox"},
		{"update", "POST", "/v1/environments/" + id, `{"packages":{"apt":["curl"]},"idle_timeout_seconds":60}`, true, 200, `"apt":["curl"]`},
		{"update keeps the rest", "GET", "/v1/environments/" + id, "", true, 200, `"env":{"A":"1"}`},
		{"update invalid", "POST", "/v1/environments/" + id, `{"network":{"mode":"open"}}`, true, 400, "network.mode"},
		{"delete", "DELETE", "/v1/environments/" + id, "", true, 204, ""},
		{"deleted", "GET", "/v1/environments/" + id, "", true, 404, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := call(t, mux, c.admin, c.method, c.path, c.body)
			raw, _ := json.Marshal(out)
			if code != c.code || !bytes.Contains(raw, []byte(c.want)) {
				t.Fatalf("%s %s: %d %s, want %d with %s", c.method, c.path, code, raw, c.code, c.want)
			}
		})
	}
}
