package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// storeCopy runs switchboard store copy with args and env over the
// test's environment, and returns its exit code and output.
func storeCopy(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, serveBinary(t), append([]string{"store", "copy"}, args...)...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_MASTER_KEY=", "SWITCHBOARD_STORE=", "SWITCHBOARD_DATA_DIR=")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("store copy: %v\n%s", err, out)
	return 0, ""
}

// TestStoreCopy: a store served on bbolt, copied with store copy, serves
// the same agents, sessions, events and vaults on PostgreSQL, and its
// sealed vault credential still authenticates to an MCP server. The
// master key comes from the data dir's master.key, or from
// SWITCHBOARD_MASTER_KEY when serve ran with it.
func TestStoreCopy(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  string // SWITCHBOARD_MASTER_KEY of the bbolt serve; "": master.key
	}{
		{"master.key file", ""},
		{"SWITCHBOARD_MASTER_KEY", "store-copy-master-key-0123456789abcdef"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mcpSrv := mcpservers.NewMCPGoHTTP()
			defer mcpSrv.Close()
			mcpSrv.Expect(mcpToken, true)
			ms, hs := modelserver.Start(t)
			env := modelEnv(hs.URL, modelserver.FormatAnthropic)
			delete(env, "SWITCHBOARD_MODEL")
			env["SWITCHBOARD_SANDBOX"] = "none"
			env["SWITCHBOARD_STORE"] = "" // bbolt, in either pass of the tests
			if tt.key != "" {
				env["SWITCHBOARD_MASTER_KEY"] = tt.key
			}
			dir := t.TempDir()
			srv := startServer(t, dir, env)

			agent := srv.agent(map[string]any{"name": "docs-agent", "system": "Be brief.", "mcp_servers": []map[string]any{
				{"name": "docs", "url": mcpSrv.URL, "auth": map[string]any{"vault_credential": srv.credential()}},
			}})
			if code, raw := srv.do("POST", "/v1/agents/"+agent, map[string]any{"system": "Be briefer."}); code != 200 {
				t.Fatalf("update agent: %d %s", code, raw)
			}
			ms.Push(call("toolu_1", "mcp_docs_authorized", map[string]any{}), modelserver.Step{Text: "authorized"})
			tooled := srv.startSession(agent, "check the docs server")
			srv.waitIdle(tooled)
			ms.Push(modelserver.Step{Text: "Hello."})
			plain := srv.startSession(agent, "say hello")
			srv.waitIdle(plain)
			if code, raw := srv.do("POST", "/v1/sessions/"+plain+"/archive", nil); code != 200 {
				t.Fatalf("archive: %d %s", code, raw)
			}
			before := apiView(srv, tooled, plain)

			dsn := pgtest.DSN(t)
			copyEnv := map[string]string{"SWITCHBOARD_MASTER_KEY": tt.key}
			code, out := storeCopy(t, copyEnv, "--from", dir, "--to", dsn)
			if code != 1 || !strings.Contains(out, "in use") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("copy beside a running serve: exit %d, want 1 and one line saying the store is in use:\n%s", code, out)
			}
			if err := srv.term(); err != nil {
				t.Fatal(err)
			}
			code, out = storeCopy(t, copyEnv, "--from", dir, "--to", dsn)
			if code != 0 || !strings.Contains(out, "sessions         2") || !strings.Contains(out, "credentials      1") {
				t.Fatalf("store copy: exit %d\n%s", code, out)
			}
			t.Logf("store copy:\n%s", out)

			key := tt.key
			if key == "" {
				b, err := os.ReadFile(filepath.Join(dir, "master.key"))
				if err != nil {
					t.Fatal(err)
				}
				key = strings.TrimSpace(string(b))
			}
			env["SWITCHBOARD_STORE"], env["SWITCHBOARD_MASTER_KEY"] = dsn, key
			pg := startServer(t, t.TempDir(), env)
			if after := apiView(pg, tooled, plain); !bytes.Equal(after, before) {
				t.Fatalf("the copy answers differently:\nbbolt:    %s\npostgres: %s", before, after)
			}
			// The copied credential still opens: the MCP server sees it.
			ms.Push(call("toolu_2", "mcp_docs_authorized", map[string]any{}), modelserver.Step{Text: "still authorized"})
			pg.send(tooled, "check again")
			_, evs := pg.waitIdle(tooled)
			if out, _ := result(t, evs, "toolu_2"); !strings.Contains(out, `"authorized":true`) {
				t.Fatalf("after the copy the server did not see the credential: %q", out)
			}
			if auths := mcpSrv.Authorizations(); auths[len(auths)-1] != "Bearer "+mcpToken {
				t.Fatalf("last Authorization header seen: %q", auths[len(auths)-1])
			}
			checkLog(t, evs)

			code, out = storeCopy(t, copyEnv, "--from", dir, "--to", dsn)
			if code != 1 || !strings.Contains(out, "not empty") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("a second copy: exit %d, want 1 and one line saying the database is not empty:\n%s", code, out)
			}
		})
	}
}

// apiView is what the API answers about the store: agents with their
// versions, the sessions, their events, and the vaults with their
// credentials, as the raw answers.
func apiView(s *server, sessions ...string) []byte {
	s.t.Helper()
	var b bytes.Buffer
	get := func(path string) []byte {
		code, raw := s.do("GET", path, nil)
		if code != 200 {
			s.t.Fatalf("GET %s: %d %s", path, code, raw)
		}
		b.Write(raw)
		b.WriteByte('\n')
		return raw
	}
	get("/v1/agents")
	get("/v1/sessions")
	for _, id := range sessions {
		get("/v1/sessions/" + id)
		get("/v1/sessions/" + id + "/events?limit=1000")
	}
	var vaults struct {
		Data []struct{ ID string } `json:"data"`
	}
	mustJSON(s.t, get("/v1/vaults"), &vaults)
	if len(vaults.Data) == 0 {
		s.t.Fatal("no vault")
	}
	for _, v := range vaults.Data {
		get("/v1/vaults/" + v.ID + "/credentials")
	}
	return b.Bytes()
}
