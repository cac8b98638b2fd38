package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// secretValues are the values typed into credential forms; no console
// answer may hold one.
var secretValues = []string{"tok-5f2a91c0e7d3", "hdr-value-77aa01", "refresh-9c1de2", "client-sec-0b3f", "new-tok-c4d8e6"}

// noSecrets checks that body shows none of the typed values.
func noSecrets(t *testing.T, what, body string) {
	t.Helper()
	for _, s := range secretValues {
		if strings.Contains(body, s) {
			t.Errorf("%s: the page holds a credential value", what)
		}
	}
}

func TestVaultPages(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeVaultsAPI(e)
	c, csrf := e.signIn()
	post := func(path string, form url.Values) *httpResult {
		form.Set("csrf", csrf)
		rec := e.do(req{method: "POST", path: path, cookie: c, form: form})
		noSecrets(t, "POST "+path, rec.Body.String())
		return &httpResult{rec.Code, rec.Header().Get("Location"), rec.Body.String()}
	}
	get := func(path string) string {
		rec := e.do(req{method: "GET", path: path, cookie: c})
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		noSecrets(t, "GET "+path, rec.Body.String())
		return rec.Body.String()
	}

	if body := get("/console/vaults"); !strings.Contains(body, `id="no-vaults"`) || !strings.Contains(body, `id="vault-create"`) {
		t.Fatalf("empty vaults page:\n%s", body)
	}
	// A refused vault: the message under the name field.
	f.refuse["POST /v1/vaults"] = `field "name" must be valid UTF-8 of at most 200 bytes`
	r := post("/console/vaults", url.Values{"name": {"x"}, "description": {"kept"}})
	if r.code != 400 || !strings.Contains(r.body, `id="vault-name-error"`) || !strings.Contains(r.body, `aria-describedby="vault-name-error"`) || !strings.Contains(r.body, `value="kept"`) {
		t.Fatalf("refused vault: %d\n%s", r.code, r.body)
	}
	delete(f.refuse, "POST /v1/vaults")
	if r = post("/console/vaults", url.Values{"name": {"team"}, "description": {"shared"}}); r.code != 303 || r.location != "vaults/vlt_001" {
		t.Fatalf("create vault: %d %q", r.code, r.location)
	}
	if body := get("/console/vaults"); !strings.Contains(body, `<a href="vaults/vlt_001">team</a>`) {
		t.Fatalf("the list lacks the vault:\n%s", body)
	}
	body := get("/console/vaults/vlt_001")
	for _, want := range []string{`id="no-credentials"`, `id="credential-static_bearer"`, `id="credential-header"`, `id="credential-oauth"`,
		`name="token" type="password" autocomplete="off"`, `action="../vaults/vlt_001/credentials"`, `id="vault-delete"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the vault page lacks %q", want)
		}
	}

	t.Run("create credentials of each kind", func(t *testing.T) {
		for _, form := range []url.Values{
			{"kind": {"static_bearer"}, "name": {"docs"}, "hosts": {"docs.example.com, *.docs.example.com"}, "token": {secretValues[0]}},
			{"kind": {"header"}, "name": {"search"}, "hosts": {"search.example.com"}, "scope": {"tenant:slack:T0123"}, "header_name": {"X-Api-Key"}, "value": {secretValues[1]}},
			{"kind": {"oauth"}, "name": {"crm"}, "hosts": {"api.crm.example.com"}, "token_url": {"https://crm.example.com/token"}, "client_id": {"cid"},
				"client_secret": {secretValues[3]}, "refresh_token": {secretValues[2]}, "access_token": {""}, "expires_at": {""}, "scopes": {"read write"}},
		} {
			n := len(f.posted())
			if r := post("/console/vaults/vlt_001/credentials", form); r.code != 303 || r.location != "../../vaults/vlt_001" {
				t.Fatalf("create %s: %d %q %s", form.Get("kind"), r.code, r.location, r.body)
			}
			calls := f.posted()
			if len(calls) != n+1 || calls[n].Path != "/v1/vaults/vlt_001/credentials" {
				t.Fatalf("calls %+v", calls[n:])
			}
			var sent map[string]any
			if err := json.Unmarshal([]byte(calls[n].Body), &sent); err != nil {
				t.Fatal(err)
			}
			// The values go to the API as typed; empty fields are not sent.
			for k, v := range form {
				if v[0] == "" {
					if _, ok := sent[k]; ok {
						t.Errorf("%s: empty %s sent", form.Get("kind"), k)
					}
					continue
				}
				if k == "hosts" || k == "scopes" || k == "scope" || k == "csrf" {
					continue
				}
				if sent[k] != v[0] {
					t.Errorf("%s: sent %s=%v, want %q", form.Get("kind"), k, sent[k], v[0])
				}
			}
			if sc, _ := json.Marshal(sent["scope"]); form.Get("scope") != "" && string(sc) != `{"tenant":"slack:T0123","type":"tenant"}` {
				t.Errorf("scope sent %s", sc)
			}
			if form.Get("kind") == "static_bearer" && len(sent["hosts"].([]any)) != 2 {
				t.Errorf("hosts sent %v", sent["hosts"])
			}
			if form.Get("kind") == "oauth" && len(sent["scopes"].([]any)) != 2 {
				t.Errorf("scopes sent %v", sent["scopes"])
			}
		}
		body := get("/console/vaults/vlt_001")
		for _, want := range []string{`id="cred-vcr_002"`, `<code>docs.example.com</code>, <code>*.docs.example.com</code>`, `<code>X-Api-Key</code>`, `id="rotate-vcr_002"`, `id="delete-vcr_003"`,
			`id="cred-vcr_002-scope">global: any session may use it`, `id="cred-vcr_003-scope">tenant slack:T0123: only its sessions may use it`,
			`id="credential-oauth-scope" name="scope"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the vault page lacks %q", want)
			}
		}
	})

	t.Run("a refused credential comes back without its value", func(t *testing.T) {
		f.refuse["POST /v1/vaults/vlt_001/credentials"] = `field "hosts" entry 0 ("nope/") is not a host`
		n := len(f.posted())
		r := post("/console/vaults/vlt_001/credentials", url.Values{"kind": {"header"}, "name": {"again"}, "hosts": {"nope/"}, "header_name": {"X-Key"}, "value": {secretValues[1]}})
		delete(f.refuse, "POST /v1/vaults/vlt_001/credentials")
		if r.code != 400 {
			t.Fatalf("%d %s", r.code, r.body)
		}
		if calls := f.posted(); len(calls) != n+1 || !strings.Contains(calls[n].Body, secretValues[1]) {
			t.Fatalf("the value did not reach the API: %+v", calls[n:])
		}
		for _, want := range []string{
			`id="credential-header-hosts-error">field &#34;hosts&#34; entry 0`, `aria-describedby="credential-header-hosts-help credential-header-hosts-error"`,
			`id="credential-header-cleared"`, `value="again"`, `value="X-Key"`, `value="nope/"`,
			`<details class="action" open>`,
		} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the refused form lacks %q", want)
			}
		}
		if strings.Contains(r.body, `id="credential-static_bearer-cleared"`) {
			t.Error("another kind's form says it was refused")
		}
	})

	t.Run("rotate", func(t *testing.T) {
		n := len(f.posted())
		if r := post("/console/vaults/vlt_001/credentials/vcr_002/rotate", url.Values{"token": {secretValues[4]}}); r.code != 303 || r.location != "../../../../vaults/vlt_001#cred-vcr_002" {
			t.Fatalf("rotate: %d %q", r.code, r.location)
		}
		calls := f.posted()
		if len(calls) != n+1 || calls[n].Method != "POST" || calls[n].Path != "/v1/vaults/vlt_001/credentials/vcr_002" || calls[n].Body != `{"token":"`+secretValues[4]+`"}` {
			t.Fatalf("rotate call %+v", calls[n:])
		}
		if body := get("/console/vaults/vlt_001"); !strings.Contains(body, "2030-05-06 08:30 UTC") {
			t.Error("the rotated credential's new time is not shown")
		}
		f.refuse["POST /v1/vaults/vlt_001/credentials/vcr_002"] = `field "token" has leading or trailing white space`
		r := post("/console/vaults/vlt_001/credentials/vcr_002/rotate", url.Values{"token": {" " + secretValues[4]}})
		delete(f.refuse, "POST /v1/vaults/vlt_001/credentials/vcr_002")
		if r.code != 400 || !strings.Contains(r.body, `id="rotate-vcr_002-token-error"`) || !strings.Contains(r.body, `id="rotate-vcr_002-cleared"`) {
			t.Fatalf("refused rotate: %d\n%s", r.code, r.body)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if r := post("/console/vaults/vlt_001/credentials/vcr_003/delete", url.Values{}); r.code != 303 {
			t.Fatalf("delete credential: %d", r.code)
		}
		if r := post("/console/vaults/vlt_001/delete", url.Values{}); r.code != 303 || r.location != "../../vaults" {
			t.Fatalf("delete vault: %d %q", r.code, r.location)
		}
		calls := f.posted()
		if got := calls[len(calls)-2:]; got[0].Method != "DELETE" || got[0].Path != "/v1/vaults/vlt_001/credentials/vcr_003" || got[1].Method != "DELETE" || got[1].Path != "/v1/vaults/vlt_001" {
			t.Fatalf("delete calls %+v", got)
		}
		rec := e.do(req{method: "GET", path: "/console/vaults/vlt_001", cookie: c})
		if rec.Code != 404 || !strings.Contains(rec.Body.String(), `vault &#34;vlt_001&#34; not found`) {
			t.Fatalf("a deleted vault: %d %s", rec.Code, rec.Body)
		}
	})
}

// httpResult is a console answer as the tests read it.
type httpResult struct {
	code     int
	location string
	body     string
}

// TestVaultFormsNeedCSRF: every vault and webhook form without its CSRF
// field is refused and calls nothing.
func TestConsoleFormsNeedCSRF(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeVaultsAPI(e)
	c, _ := e.signIn()
	f.addDelivery("dlv_1", "dst_1", "dead")
	for _, path := range []string{
		"/console/vaults", "/console/vaults/vlt_1/delete", "/console/vaults/vlt_1/credentials",
		"/console/vaults/vlt_1/credentials/vcr_1/rotate", "/console/vaults/vlt_1/credentials/vcr_1/delete",
		"/console/webhooks/destinations", "/console/webhooks/destinations/dst_1/pause", "/console/webhooks/destinations/dst_1/resume",
		"/console/webhooks/destinations/dst_1/delete", "/console/webhooks/deliveries/dlv_1/redeliver",
	} {
		t.Run(path, func(t *testing.T) {
			for _, csrf := range []string{"", "forged"} {
				form := url.Values{"name": {"x"}, "kind": {"static_bearer"}, "token": {secretValues[0]}, "url": {"https://h.example.com/"}}
				if csrf != "" {
					form.Set("csrf", csrf)
				}
				rec := e.do(req{method: "POST", path: path, cookie: c, form: form})
				if rec.Code != http.StatusForbidden {
					t.Fatalf("csrf %q: %d", csrf, rec.Code)
				}
				noSecrets(t, path, rec.Body.String())
			}
			if calls := f.posted(); len(calls) != 0 {
				t.Fatalf("the API was called: %+v", calls)
			}
		})
	}
}
