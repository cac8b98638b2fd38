package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// scopedCredential stores mcpToken in vault as a credential bound to
// loopback, owned by scope (nil: global), and returns its id.
func (s *server) scopedCredential(vault, name string, scope map[string]any) string {
	s.t.Helper()
	body := map[string]any{"name": name, "kind": "static_bearer", "hosts": []string{"127.0.0.1"}, "token": mcpToken}
	if scope != nil {
		body["scope"] = scope
	}
	code, raw := s.do("POST", "/v1/vaults/"+vault+"/credentials", body)
	if code != 201 {
		s.t.Fatalf("credential %s: %d %s", name, code, raw)
	}
	var c struct{ ID string }
	mustJSON(s.t, raw, &c)
	return c.ID
}

func (s *server) sessionOf(agent, tenant, input string) (int, []byte) {
	s.t.Helper()
	return s.do("POST", "/v1/sessions", map[string]any{"agent": agent, "tenant": tenant, "input": input})
}

// TestVaultScopes: a session of tenant A whose agent names tenant B's
// credential is refused at create, saying whose the credential is; a
// session of B runs with it, and a global credential serves A. A
// credential moved to B while A's session uses it is refused at its next
// use, with the same words, in the tool's result.
func TestVaultScopes(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	mcpSrv.Expect(mcpToken, true)
	ms, srv := toolsEnv(t)
	code, raw := srv.do("POST", "/v1/vaults", map[string]any{"name": "mcp"})
	if code != 201 {
		t.Fatalf("vault: %d %s", code, raw)
	}
	var v struct{ ID string }
	mustJSON(t, raw, &v)
	ofB := srv.scopedCredential(v.ID, "docs-b", map[string]any{"type": "tenant", "tenant": "tenant-b"})
	global := srv.scopedCredential(v.ID, "docs", nil)
	agentWith := func(name, cred string) string {
		return srv.agent(map[string]any{"name": name, "mcp_servers": []map[string]any{
			{"name": "docs", "url": mcpSrv.URL, "auth": map[string]any{"vault_credential": cred}},
		}})
	}
	bAgent, globalAgent := agentWith("b-docs", ofB), agentWith("docs", global)

	t.Run("refused at create", func(t *testing.T) {
		code, raw := srv.sessionOf(bAgent, "tenant-a", "use the docs")
		if code != 403 || !strings.Contains(string(raw), ofB) || !strings.Contains(string(raw), "scoped to tenant tenant-b") || !strings.Contains(string(raw), "tenant tenant-a") {
			t.Fatalf("create = %d %s, want 403 naming %s, its scope and the session's tenant", code, raw, ofB)
		}
	})
	runs := func(t *testing.T, agent, tenant string) string {
		t.Helper()
		ms.Push(call("toolu_1", "mcp_docs_authorized", map[string]any{}), modelserver.Step{Text: "done"})
		code, raw := srv.sessionOf(agent, tenant, "use the docs")
		if code != 201 {
			t.Fatalf("create = %d %s", code, raw)
		}
		var c struct{ ID string }
		mustJSON(t, raw, &c)
		_, evs := srv.waitIdle(c.ID)
		if out, isErr := result(t, evs, "toolu_1"); isErr || !strings.Contains(out, `"authorized":true`) {
			t.Fatalf("the server did not see the credential: %q error=%v", out, isErr)
		}
		noSecret(t, ms, srv, c.ID)
		return c.ID
	}
	t.Run("the owner's session uses it", func(t *testing.T) { runs(t, bAgent, "tenant-b") })
	t.Run("global serves every tenant", func(t *testing.T) { runs(t, globalAgent, "tenant-a") })

	t.Run("refused at use", func(t *testing.T) {
		moved := srv.scopedCredential(v.ID, "docs-moving", nil)
		id := runs(t, agentWith("moving-docs", moved), "tenant-a")
		code, raw := srv.do("POST", "/v1/vaults/"+v.ID+"/credentials/"+moved, map[string]any{"scope": map[string]any{"type": "tenant", "tenant": "tenant-b"}})
		if code != 200 {
			t.Fatalf("rescope: %d %s", code, raw)
		}
		ms.Push(call("toolu_2", "mcp_docs_authorized", map[string]any{}), modelserver.Step{Text: "done"})
		srv.send(id, "again")
		_, evs := srv.waitIdle(id)
		out, isErr := result(t, evs, "toolu_2")
		if !isErr || !strings.Contains(out, moved) || !strings.Contains(out, "scoped to tenant tenant-b") {
			t.Fatalf("tool result %q error=%v, want a refusal naming %s and its scope", out, isErr, moved)
		}
	})
}
