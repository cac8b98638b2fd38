package vaults

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

func (e *env) newVault(name string) *core.Vault {
	e.t.Helper()
	var v core.Vault
	e.want(http.StatusCreated, "POST", "/v1/vaults", map[string]any{"name": name}, &v)
	return &v
}

func (e *env) newCredential(vaultID string, body map[string]any) *core.Credential {
	e.t.Helper()
	var c core.Credential
	e.want(http.StatusCreated, "POST", "/v1/vaults/"+vaultID+"/credentials", body, &c)
	return &c
}

func TestVaultRoundTrip(t *testing.T) {
	e := newEnv(t)
	var v core.Vault
	e.want(http.StatusCreated, "POST", "/v1/vaults", `{"name":"github","description":"repo access","metadata":{"team":"infra"}}`, &v)
	if !core.HasPrefix(v.ID, core.PrefixVault) || v.Name != "github" || v.Description != "repo access" || v.Metadata["team"] != "infra" || v.CreatedAt.IsZero() {
		t.Fatalf("created vault = %+v", v)
	}
	var got core.Vault
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID, nil, &got)
	if got.ID != v.ID || got.Name != v.Name {
		t.Fatalf("get vault = %+v", got)
	}
	w := e.newVault("linear")
	var page web.Page[core.Vault]
	e.want(http.StatusOK, "GET", "/v1/vaults?limit=1", nil, &page)
	if len(page.Data) != 1 || !page.HasMore {
		t.Fatalf("first page = %+v", page)
	}
	var rest web.Page[core.Vault]
	e.want(http.StatusOK, "GET", "/v1/vaults?limit=1&after="+page.Data[0].ID, nil, &rest)
	if len(rest.Data) != 1 || rest.HasMore || rest.Data[0].ID == page.Data[0].ID {
		t.Fatalf("second page = %+v", rest)
	}

	e.want(http.StatusNoContent, "DELETE", "/v1/vaults/"+w.ID, nil, nil)
	e.want(http.StatusNotFound, "GET", "/v1/vaults/"+w.ID, nil, nil)
	e.want(http.StatusNotFound, "DELETE", "/v1/vaults/"+w.ID, nil, nil)
}

func TestCredentialKinds(t *testing.T) {
	e := newEnv(t)
	v := e.newVault("v")
	bearer, value := e.secret("bearer"), e.secret("header")
	access, refresh, clientSecret := e.secret("access"), e.secret("refresh"), e.secret("client")
	exp := core.NewTime(time.Now().Add(time.Hour))

	tests := []struct {
		name   string
		body   map[string]any
		check  func(c *core.Credential) bool
		secret core.CredentialSecret
	}{
		{"static_bearer", map[string]any{"name": "gh", "kind": "static_bearer", "hosts": []string{"API.GitHub.com", "api.github.com"}, "token": bearer},
			func(c *core.Credential) bool { return slices.Equal(c.Hosts, []string{"api.github.com"}) },
			core.CredentialSecret{Token: bearer}},
		{"header", map[string]any{"name": "key", "kind": "header", "hosts": []string{"*.example.com", "example.com:8443"}, "header_name": "x-api-key", "value": value},
			func(c *core.Credential) bool {
				return c.HeaderName == "X-Api-Key" && slices.Equal(c.Hosts, []string{"*.example.com", "example.com:8443"})
			},
			core.CredentialSecret{Value: value}},
		{"oauth", map[string]any{"name": "linear", "kind": "oauth", "hosts": []string{"api.linear.app"}, "access_token": access, "refresh_token": refresh,
			"token_url": "https://api.linear.app/oauth/token", "client_id": "cid", "client_secret": clientSecret, "scopes": []string{"read", "write"}, "expires_at": exp},
			func(c *core.Credential) bool {
				return c.TokenURL == "https://api.linear.app/oauth/token" && c.ClientID == "cid" && slices.Equal(c.Scopes, []string{"read", "write"}) && c.ExpiresAt.Equal(exp.Time)
			},
			core.CredentialSecret{AccessToken: access, RefreshToken: refresh, ClientSecret: clientSecret}},
	}
	var ids []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &core.Credential{}
			raw := e.want(http.StatusCreated, "POST", "/v1/vaults/"+v.ID+"/credentials", tc.body, c)
			m := fields(t, raw)
			for _, k := range []string{"token", "value", "access_token", "refresh_token", "client_secret"} {
				if _, ok := m[k]; ok {
					t.Fatalf("answer has secret field %q: %s", k, raw)
				}
			}
			if !core.HasPrefix(c.ID, core.PrefixCredential) || c.VaultID != v.ID || string(c.Kind) != tc.name || !tc.check(c) {
				t.Fatalf("credential = %+v", c)
			}
			_, sec := e.stored(c.ID)
			if sec != tc.secret {
				t.Fatal("stored secret differs from the one posted")
			}
			// Sealed to its own id: the bytes do not open as another record.
			_, sealed, _ := e.store.GetCredential(t.Context(), c.ID)
			if _, err := e.sealer.Open(sealed, []byte(v.ID)); err == nil {
				t.Fatal("secret opens with another aad")
			}
			var one core.Credential
			e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials/"+c.ID, nil, &one)
			if one.ID != c.ID || one.Name != c.Name {
				t.Fatalf("get = %+v", one)
			}
			ids = append(ids, c.ID)
		})
	}
	var page web.Page[core.Credential]
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials", nil, &page)
	if len(page.Data) != 3 || page.HasMore {
		t.Fatalf("listed %d credentials (more %v), want 3", len(page.Data), page.HasMore)
	}
	var first web.Page[core.Credential]
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials?limit=2", nil, &first)
	var second web.Page[core.Credential]
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials?limit=2&after="+first.Data[1].ID, nil, &second)
	if len(first.Data) != 2 || !first.HasMore || len(second.Data) != 1 || second.HasMore || second.Data[0].ID <= first.Data[1].ID {
		t.Fatalf("pages of %d (more %v) and %d (more %v)", len(first.Data), first.HasMore, len(second.Data), second.HasMore)
	}

	// Deleting the vault deletes its credentials and their secrets.
	e.want(http.StatusNoContent, "DELETE", "/v1/vaults/"+v.ID, nil, nil)
	for _, id := range ids {
		if _, _, err := e.store.GetCredential(t.Context(), id); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("credential %s after vault delete: %v", id, err)
		}
	}
	e.want(http.StatusNotFound, "GET", "/v1/vaults/"+v.ID+"/credentials", nil, nil)
}

func TestCredentialRotate(t *testing.T) {
	e := newEnv(t)
	v := e.newVault("v")
	old, next := e.secret("old"), e.secret("new")
	c := e.newCredential(v.ID, map[string]any{"name": "gh", "kind": "static_bearer", "hosts": []string{"api.github.com"}, "token": old})
	path := "/v1/vaults/" + v.ID + "/credentials/" + c.ID

	var rotated core.Credential
	e.want(http.StatusOK, "POST", path, map[string]any{"token": next}, &rotated)
	if rotated.ID != c.ID || !slices.Equal(rotated.Hosts, c.Hosts) || !rotated.CreatedAt.Equal(c.CreatedAt.Time) {
		t.Fatalf("rotated = %+v", rotated)
	}
	if _, sec := e.stored(c.ID); sec.Token != next {
		t.Fatal("token not replaced")
	}
	e.want(http.StatusOK, "POST", path, `{"hosts":["uploads.github.com"],"name":"renamed","kind":"static_bearer"}`, &rotated)
	if rotated.Name != "renamed" || !slices.Equal(rotated.Hosts, []string{"uploads.github.com"}) {
		t.Fatalf("re-hosted = %+v", rotated)
	}
	if _, sec := e.stored(c.ID); sec.Token != next {
		t.Fatal("changing hosts lost the token")
	}

	// oauth: a new access token without expires_at forgets the old expiry;
	// the refresh token and client secret stay.
	refresh, access := e.secret("refresh"), e.secret("access")
	o := e.newCredential(v.ID, map[string]any{"name": "o", "kind": "oauth", "hosts": []string{"h.example"}, "refresh_token": refresh,
		"token_url": "http://127.0.0.1:1/token", "client_id": "c", "access_token": e.secret("access"), "expires_at": core.Now()})
	e.want(http.StatusOK, "POST", "/v1/vaults/"+v.ID+"/credentials/"+o.ID, map[string]any{"access_token": access}, &rotated)
	if rotated.ExpiresAt != nil {
		t.Fatalf("expiry kept for a new access token: %v", rotated.ExpiresAt)
	}
	if _, sec := e.stored(o.ID); sec.AccessToken != access || sec.RefreshToken != refresh {
		t.Fatal("oauth rotation stored the wrong secret")
	}

	e.want(http.StatusNoContent, "DELETE", path, nil, nil)
	e.want(http.StatusNotFound, "GET", path, nil, nil)
	e.want(http.StatusNotFound, "POST", path, map[string]any{"token": next}, nil)
	e.want(http.StatusNotFound, "DELETE", path, nil, nil)
}

func TestValidation(t *testing.T) {
	e := newEnv(t)
	v := e.newVault("v")
	creds := "/v1/vaults/" + v.ID + "/credentials"
	leaked := e.secret("leak")
	static := e.newCredential(v.ID, map[string]any{"name": "s", "kind": "static_bearer", "hosts": []string{"a.example"}, "token": e.secret("tok")})
	rotate := creds + "/" + static.ID
	oauthBase := func(extra string) string {
		return `{"name":"o","kind":"oauth","hosts":["a.example"],"refresh_token":"r-x","token_url":"https://a.example/token","client_id":"c"` + extra + `}`
	}
	tests := []struct {
		name, path, body, want string
	}{
		{"vault unknown field", "/v1/vaults", `{"name":"x","nmae":"y"}`, `unknown field "nmae"`},
		{"vault no name", "/v1/vaults", `{"description":"d"}`, `field "name" is required`},
		{"vault empty body", "/v1/vaults", ``, `request body is empty`},
		{"unknown field", creds, `{"name":"x","kind":"static_bearer","hosts":["a.example"],"token":"t","tokn":"t"}`, `unknown field "tokn"`},
		{"no kind", creds, `{"name":"x","hosts":["a.example"],"token":"t"}`, `field "kind" is required`},
		{"bad kind", creds, `{"name":"x","kind":"basic","hosts":["a.example"],"token":"t"}`, `unknown kind "basic"`},
		{"no name", creds, `{"kind":"static_bearer","hosts":["a.example"],"token":"t"}`, `field "name" is required`},
		{"no hosts", creds, `{"name":"x","kind":"static_bearer","token":"t"}`, `field "hosts" is required`},
		{"empty hosts", creds, `{"name":"x","kind":"static_bearer","hosts":[],"token":"t"}`, `field "hosts" must name at least one host`},
		{"hosts not a list", creds, `{"name":"x","kind":"static_bearer","hosts":"a.example","token":"t"}`, `field "hosts"`},
		{"host with scheme", creds, `{"name":"x","kind":"static_bearer","hosts":["https://a.example"],"token":"t"}`, `field "hosts" entry 0`},
		{"host bad port", creds, `{"name":"x","kind":"static_bearer","hosts":["a.example","a.example:0"],"token":"t"}`, `field "hosts" entry 1`},
		{"wildcard tld", creds, `{"name":"x","kind":"static_bearer","hosts":["*.com"],"token":"t"}`, `field "hosts" entry 0`},
		{"bare wildcard", creds, `{"name":"x","kind":"static_bearer","hosts":["*"],"token":"t"}`, `field "hosts" entry 0`},
		{"no token", creds, `{"name":"x","kind":"static_bearer","hosts":["a.example"]}`, `field "token" is required for kind "static_bearer"`},
		{"empty token", creds, `{"name":"x","kind":"static_bearer","hosts":["a.example"],"token":""}`, `field "token" must not be empty`},
		{"field of another kind", creds, `{"name":"x","kind":"static_bearer","hosts":["a.example"],"token":"t","value":"v"}`, `field "value" is not used by kind "static_bearer"`},
		{"no header_name", creds, `{"name":"x","kind":"header","hosts":["a.example"],"value":"v"}`, `field "header_name" is required for kind "header"`},
		{"no value", creds, `{"name":"x","kind":"header","hosts":["a.example"],"header_name":"X-Key"}`, `field "value" is required for kind "header"`},
		{"header_name host", creds, `{"name":"x","kind":"header","hosts":["a.example"],"header_name":"host","value":"v"}`, `field "header_name" "Host" cannot carry`},
		{"header_name content-length", creds, `{"name":"x","kind":"header","hosts":["a.example"],"header_name":"Content-Length","value":"v"}`, `field "header_name"`},
		{"header_name space", creds, `{"name":"x","kind":"header","hosts":["a.example"],"header_name":"X Key","value":"v"}`, `field "header_name" "X Key" is not a valid header name`},
		{"value with newline", creds, fmt.Sprintf(`{"name":"x","kind":"header","hosts":["a.example"],"header_name":"X-Key","value":"%s\r\nX-Evil: 1"}`, leaked), `field "value" has a control character`},
		{"oauth no refresh_token", creds, `{"name":"o","kind":"oauth","hosts":["a.example"],"token_url":"https://a.example/t","client_id":"c"}`, `field "refresh_token" is required for kind "oauth"`},
		{"oauth no token_url", creds, `{"name":"o","kind":"oauth","hosts":["a.example"],"refresh_token":"r","client_id":"c"}`, `field "token_url" is required`},
		{"oauth no client_id", creds, `{"name":"o","kind":"oauth","hosts":["a.example"],"refresh_token":"r","token_url":"https://a.example/t"}`, `field "client_id" is required`},
		{"oauth ftp token_url", creds, `{"name":"o","kind":"oauth","hosts":["a.example"],"refresh_token":"r","client_id":"c","token_url":"ftp://a.example/t"}`, `field "token_url" must be an http or https URL`},
		{"oauth token_url userinfo", creds, `{"name":"o","kind":"oauth","hosts":["a.example"],"refresh_token":"r","client_id":"c","token_url":"https://u:p@a.example/t"}`, `field "token_url" must not carry a user`},
		{"oauth expiry without token", creds, oauthBase(`,"expires_at":"2030-01-01T00:00:00Z"`), `field "expires_at"`},
		{"oauth bad expiry", creds, oauthBase(`,"access_token":"a","expires_at":"tomorrow"`), `field "expires_at": want an RFC 3339 time`},
		{"oauth bad scope", creds, oauthBase(`,"scopes":["read write"]`), `field "scopes" entry 0`},
		{"oauth token field", creds, oauthBase(`,"token":"t"`), `field "token" is not used by kind "oauth"`},
		{"rotate kind change", rotate, `{"kind":"header"}`, `field "kind" cannot change`},
		{"rotate nothing", rotate, `{}`, `nothing to change`},
		{"rotate other kind's field", rotate, `{"refresh_token":"r"}`, `field "refresh_token" is not used by kind "static_bearer"`},
		{"rotate empty hosts", rotate, `{"hosts":[]}`, `field "hosts" must name at least one host`},
		{"rotate unknown field", rotate, `{"secret":"s"}`, `unknown field "secret"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := e.call(&core.Principal{Admin: true}, "POST", tc.path, tc.body)
			if typ, msg := apiError(t, raw); code != http.StatusBadRequest || typ != "invalid_request" || !strings.Contains(msg, tc.want) {
				t.Fatalf("= %d %s, want 400 naming %s", code, raw, tc.want)
			}
		})
	}
	var page web.Page[core.Credential]
	e.want(http.StatusOK, "GET", creds, nil, &page)
	if len(page.Data) != 1 {
		t.Fatalf("invalid bodies stored credentials: %d listed", len(page.Data))
	}
	var vaults web.Page[core.Vault]
	e.want(http.StatusOK, "GET", "/v1/vaults", nil, &vaults)
	if len(vaults.Data) != 1 {
		t.Fatalf("invalid bodies stored vaults: %d listed", len(vaults.Data))
	}
	code, raw := e.call(&core.Principal{Admin: true}, "GET", "/v1/vaults?limit=0", nil)
	if code != http.StatusBadRequest || !strings.Contains(string(raw), "limit") {
		t.Fatalf("limit=0 = %d %s", code, raw)
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t)
	a, b := e.newVault("a"), e.newVault("b")
	c := e.newCredential(a.ID, map[string]any{"name": "s", "kind": "static_bearer", "hosts": []string{"a.example"}, "token": e.secret("tok")})
	missing := core.NewID(core.PrefixVault)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/vaults/" + missing},
		{"GET", "/v1/vaults/" + missing + "/credentials"},
		{"POST", "/v1/vaults/" + missing + "/credentials"},
		{"GET", "/v1/vaults/" + b.ID + "/credentials/" + c.ID},
		{"POST", "/v1/vaults/" + b.ID + "/credentials/" + c.ID},
		{"DELETE", "/v1/vaults/" + b.ID + "/credentials/" + c.ID},
		{"GET", "/v1/vaults/" + a.ID + "/credentials/" + core.NewID(core.PrefixCredential)},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = map[string]any{"name": "s", "kind": "static_bearer", "hosts": []string{"a.example"}, "token": "t"}
			}
			code, raw := e.call(&core.Principal{Admin: true}, tc.method, tc.path, body)
			if code != http.StatusNotFound || !strings.Contains(string(raw), `"type":"not_found"`) {
				t.Fatalf("= %d %s, want 404", code, raw)
			}
		})
	}
	// The credential survived the attempts through the wrong vault.
	e.want(http.StatusOK, "GET", "/v1/vaults/"+a.ID+"/credentials/"+c.ID, nil, nil)
}

func TestClientTokenRefused(t *testing.T) {
	e := newEnv(t)
	v := e.newVault("v")
	c := e.newCredential(v.ID, map[string]any{"name": "s", "kind": "static_bearer", "hosts": []string{"a.example"}, "token": e.secret("tok")})
	client := &core.Principal{SessionID: core.NewID(core.PrefixSession)}
	body := `{"name":"x","kind":"static_bearer","hosts":["a.example"],"token":"t"}`
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/vaults", `{"name":"x"}`},
		{"GET", "/v1/vaults", ""},
		{"GET", "/v1/vaults/" + v.ID, ""},
		{"DELETE", "/v1/vaults/" + v.ID, ""},
		{"POST", "/v1/vaults/" + v.ID + "/credentials", body},
		{"GET", "/v1/vaults/" + v.ID + "/credentials", ""},
		{"GET", "/v1/vaults/" + v.ID + "/credentials/" + c.ID, ""},
		{"POST", "/v1/vaults/" + v.ID + "/credentials/" + c.ID, `{"token":"t"}`},
		{"DELETE", "/v1/vaults/" + v.ID + "/credentials/" + c.ID, ""},
	} {
		for _, p := range []*core.Principal{client, nil} {
			t.Run(fmt.Sprintf("%s %s as %v", tc.method, tc.path, p), func(t *testing.T) {
				var body any
				if tc.body != "" {
					body = tc.body
				}
				code, raw := e.call(p, tc.method, tc.path, body)
				if code != http.StatusUnauthorized || !strings.Contains(string(raw), `"type":"unauthorized"`) {
					t.Fatalf("= %d %s, want 401", code, raw)
				}
			})
		}
	}
	// Nothing changed.
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials/"+c.ID, nil, nil)
	var page web.Page[core.Vault]
	e.want(http.StatusOK, "GET", "/v1/vaults", nil, &page)
	if len(page.Data) != 1 {
		t.Fatalf("%d vaults after refused calls", len(page.Data))
	}
}
