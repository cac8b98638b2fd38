package vaults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// tenancies is a hand-written Tenancies: sessions and installations by id.
type tenancies struct {
	sessions      map[string]*core.Session
	installations map[string]*core.Installation // by provider:external id
}

func (f *tenancies) GetSession(_ context.Context, id string) (*core.Session, error) {
	if s, ok := f.sessions[id]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("session %q: %w", id, core.ErrNotFound)
}

func (f *tenancies) FindInstallation(_ context.Context, provider, externalID string) (*core.Installation, error) {
	if in, ok := f.installations[provider+":"+externalID]; ok {
		return in, nil
	}
	return nil, fmt.Errorf("installation %s %s: %w", provider, externalID, core.ErrNotFound)
}

// scopeWorld: sessions of tenants A (an API session), B (a Slack session
// whose workspace is in tenant group acme) and C (a Slack session of a
// workspace in no group), and a credential of each owner.
type scopeWorld struct {
	e                                 *env
	r                                 *Resolver
	global, ofA, ofB, ofAcme, ofOther *core.Credential
}

func newScopeWorld(t *testing.T) *scopeWorld {
	e := newEnv(t)
	v := e.newVault("v")
	cred := func(name string, scope any) *core.Credential {
		body := map[string]any{"name": name, "kind": "static_bearer", "hosts": []string{"api.example.com"}, "token": e.secret(name)}
		if scope != nil {
			body["scope"] = scope
		}
		return e.newCredential(v.ID, body)
	}
	w := &scopeWorld{e: e,
		global:  cred("global", nil),
		ofA:     cred("a", map[string]any{"type": "tenant", "tenant": "tenant-a"}),
		ofB:     cred("b", map[string]any{"type": "tenant", "tenant": "slack:TB"}),
		ofAcme:  cred("acme", map[string]any{"type": "tenant_group", "tenant_group": "acme"}),
		ofOther: cred("other", map[string]any{"type": "tenant_group", "tenant_group": "other"}),
	}
	w.r = e.resolver(nil)
	w.r.Sessions = &tenancies{
		sessions: map[string]*core.Session{
			"ses_a": {ID: "ses_a", Tenant: "tenant-a"},
			"ses_b": {ID: "ses_b", Tenant: "slack:TB", Origin: &core.Origin{Provider: "slack", Key: "slack:TB:C1:1.0", TenantID: "TB"}},
			"ses_c": {ID: "ses_c", Tenant: "slack:TC", Origin: &core.Origin{Provider: "slack", Key: "slack:TC:C1:1.0", TenantID: "TC"}},
		},
		installations: map[string]*core.Installation{
			"slack:TB": {ID: "ins_b", Provider: "slack", ExternalID: "TB", TenantGroup: "acme"},
			"slack:TC": {ID: "ins_c", Provider: "slack", ExternalID: "TC"},
		},
	}
	return w
}

// TestResolverScopes: a credential resolves for a session of its owner
// (its tenant, or a tenant group the session's installation is in) and
// is refused to any other, and to a use for no session, with an error
// naming the credential and its scope; a global one resolves for all.
func TestResolverScopes(t *testing.T) {
	w := newScopeWorld(t)
	tests := []struct {
		session string
		cred    *core.Credential
		ok      bool
	}{
		{"ses_a", w.global, true}, {"ses_b", w.global, true}, {"", w.global, true},
		{"ses_a", w.ofA, true}, {"ses_b", w.ofA, false}, {"", w.ofA, false},
		{"ses_b", w.ofB, true}, {"ses_a", w.ofB, false}, {"ses_c", w.ofB, false},
		{"ses_b", w.ofAcme, true}, {"ses_a", w.ofAcme, false}, {"ses_c", w.ofAcme, false},
		{"ses_b", w.ofOther, false},
		{"ses_gone", w.ofA, false},
	}
	for _, tc := range tests {
		t.Run(tc.session+"/"+tc.cred.Name, func(t *testing.T) {
			ctx := t.Context()
			if tc.session != "" {
				ctx = core.WithCredentialSession(ctx, tc.session)
			}
			_, _, herr := w.r.Header(ctx, tc.cred.ID, "api.example.com")
			_, terr := w.r.Token(ctx, tc.cred.ID)
			for _, err := range []error{herr, terr} {
				if tc.ok {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					continue
				}
				if !errors.Is(err, core.ErrForbidden) && !errors.Is(err, core.ErrNotFound) {
					t.Fatalf("err = %v, want forbidden", err)
				}
				if tc.session != "ses_gone" {
					if se := (*core.ScopeError)(nil); !errors.As(err, &se) || !strings.Contains(err.Error(), tc.cred.ID) || !strings.Contains(err.Error(), "scoped to "+tc.cred.Scope.String()) {
						t.Fatalf("err = %v, want a scope error naming %s and %s", err, tc.cred.ID, tc.cred.Scope)
					}
				}
			}
		})
	}
	// A credential bound elsewhere is not for this host, whoever owns it:
	// not a scope refusal.
	_, _, err := w.r.Header(core.WithCredentialSession(t.Context(), "ses_a"), w.ofB.ID, "other.example.com")
	if se := (*core.ScopeError)(nil); errors.As(err, &se) || !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("other host: %v, want a host refusal", err)
	}
}

// TestCheckSession: the check at create names the field, the credential
// and its scope; a session whose credentials are all usable passes.
func TestCheckSession(t *testing.T) {
	w := newScopeWorld(t)
	a := core.Tenancy{Session: "ses_new", Tenant: "tenant-a"}
	agent := func(creds ...string) *core.Agent {
		ag := &core.Agent{Name: "helper"}
		for i, c := range creds {
			ag.MCPServers = append(ag.MCPServers, core.MCPServerSpec{Name: fmt.Sprintf("s%d", i), Auth: &core.MCPAuth{VaultCredential: c}})
		}
		return ag
	}
	ctx := t.Context()
	if err := w.r.CheckSession(ctx, a, agent(w.global.ID, w.ofA.ID), &core.Environment{Name: "py", Credentials: []string{w.global.ID}}); err != nil {
		t.Fatalf("own and global credentials refused: %v", err)
	}
	acp := &core.Agent{Name: "coder", Runtime: core.AgentRuntime{Kind: core.RuntimeACP, ModelCredential: w.ofB.ID}}
	for name, err := range map[string]error{
		"mcp server":       w.r.CheckSession(ctx, a, agent(w.global.ID, w.ofB.ID), nil),
		"model credential": w.r.CheckSession(ctx, a, acp, nil),
		"environment":      w.r.CheckSession(ctx, a, agent(), &core.Environment{Name: "py", Credentials: []string{w.ofB.ID}}),
	} {
		if !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), w.ofB.ID) || !strings.Contains(err.Error(), "tenant slack:TB") {
			t.Errorf("%s: err = %v, want forbidden naming %s and tenant slack:TB", name, err, w.ofB.ID)
		}
	}
}

// TestCredentialScopeAPI: the scope is shown on every credential (global
// when none was given), set on create and changed on rotate; a malformed
// one is a 400 naming the field.
func TestCredentialScopeAPI(t *testing.T) {
	e := newEnv(t)
	v := e.newVault("v")
	base := func(scope any) map[string]any {
		b := map[string]any{"name": "c", "kind": "static_bearer", "hosts": []string{"api.example.com"}, "token": e.secret("t")}
		if scope != nil {
			b["scope"] = scope
		}
		return b
	}
	raw := e.want(http.StatusCreated, "POST", "/v1/vaults/"+v.ID+"/credentials", base(nil), nil)
	if !strings.Contains(string(raw), `"scope":{"type":"global"}`) {
		t.Fatalf("credential without a scope: %s, want scope global shown", raw)
	}
	c := e.newCredential(v.ID, base(map[string]any{"type": "tenant", "tenant": "github:acme/app"}))
	if c.Scope != (core.CredentialScope{Type: core.ScopeTenant, Tenant: "github:acme/app"}) {
		t.Fatalf("created scope %+v", c.Scope)
	}
	var got core.Credential
	e.want(http.StatusOK, "GET", "/v1/vaults/"+v.ID+"/credentials/"+c.ID, nil, &got)
	if got.Scope != c.Scope {
		t.Fatalf("read scope %+v, want %+v", got.Scope, c.Scope)
	}
	var rotated core.Credential
	e.want(http.StatusOK, "POST", "/v1/vaults/"+v.ID+"/credentials/"+c.ID, map[string]any{"scope": map[string]any{"type": "tenant_group", "tenant_group": "acme"}}, &rotated)
	if rotated.Scope != (core.CredentialScope{Type: core.ScopeTenantGroup, TenantGroup: "acme"}) {
		t.Fatalf("rotated scope %+v", rotated.Scope)
	}
	for name, tc := range map[string]struct {
		scope any
		want  string
	}{
		"unknown type":      {map[string]any{"type": "team"}, `"scope.type"`},
		"tenant missing":    {map[string]any{"type": "tenant"}, `"scope.tenant"`},
		"group missing":     {map[string]any{"type": "tenant_group", "tenant_group": ""}, `"scope.tenant_group"`},
		"both":              {map[string]any{"type": "tenant", "tenant": "a", "tenant_group": "g"}, `"scope.tenant_group"`},
		"global with owner": {map[string]any{"type": "global", "tenant": "a"}, `"scope"`},
		"unknown field":     {map[string]any{"type": "tenant", "tenant": "a", "team": "x"}, `team`},
		"not an object":     {"tenant:a", `scope`},
	} {
		t.Run(name, func(t *testing.T) {
			code, raw := e.call(&core.Principal{Admin: true}, "POST", "/v1/vaults/"+v.ID+"/credentials", base(tc.scope))
			typ, msg := apiError(t, raw)
			if code != http.StatusBadRequest || typ != "invalid_request" || !strings.Contains(msg, tc.want) {
				t.Fatalf("= %d %s, want 400 naming %s", code, raw, tc.want)
			}
		})
	}
}
