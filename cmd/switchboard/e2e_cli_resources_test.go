package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// page is a list as --json prints it.
type page[T any] struct {
	Data []T `json:"data"`
}

type idName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// fails runs a command that must exit 1 with want in its error.
func (c cliRunner) fails(want string, args ...string) {
	c.t.Helper()
	out, errOut, code := c.run("", args...)
	if code != 1 || !strings.Contains(errOut, want) {
		c.t.Fatalf("switchboard %s: exit %d, want 1 with %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errOut)
	}
}

// TestCLIVaults: vaults and credentials over a real serve, by id and by
// name; a credential's value is read from a file or stdin, and printed
// by no command.
func TestCLIVaults(t *testing.T) {
	srv := startServer(t, t.TempDir(), nil)
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	const secret, rotated = "tok-cli-7c1e90ab", "tok-cli-rotated-55d2"

	out := sb.ok("", "vault", "create", "team", "--description", "the team's")
	vaultID := field(t, out, "id")
	if field(t, out, "name") != "team" || field(t, out, "description") != "the team's" {
		t.Fatalf("vault create printed:\n%s", out)
	}
	var vaults page[idName]
	sb.okJSON(&vaults, "vault", "list", "--json")
	if len(vaults.Data) != 1 || vaults.Data[0].ID != vaultID {
		t.Fatalf("vault list --json: %+v", vaults)
	}
	if list := sb.ok("", "vault", "list"); !regexp.MustCompile(`(?m)^` + vaultID + `\s+team\s+the team's`).MatchString(list) {
		t.Fatalf("vault list:\n%s", list)
	}
	var got idName
	sb.okJSON(&got, "vault", "get", "team", "--json")
	if got.ID != vaultID {
		t.Fatalf("vault get by name: %+v", got)
	}
	sb.fails(`no vault has the id or name "taem"; did you mean "team"?`, "vault", "get", "taem")

	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = sb.ok("", "credential", "create", "team", "--name", "docs", "--kind", "static_bearer", "--host", "docs.example.com", "--value-file", file)
	credID := field(t, out, "id")
	if field(t, out, "kind") != "static_bearer" || field(t, out, "hosts") != "docs.example.com" || strings.Contains(out, secret) {
		t.Fatalf("credential create printed:\n%s", out)
	}
	var creds page[idName]
	sb.okJSON(&creds, "credential", "list", vaultID, "--json")
	if len(creds.Data) != 1 || creds.Data[0].ID != credID || creds.Data[0].Name != "docs" {
		t.Fatalf("credential list --json: %+v", creds)
	}
	sb.okJSON(&got, "credential", "get", "team", "docs", "--json")
	if got.ID != credID {
		t.Fatalf("credential get by names: %+v", got)
	}
	if out := sb.ok(rotated+"\n", "credential", "rotate", "team", "docs", "--value-file", "-"); strings.Contains(out, rotated) {
		t.Fatalf("credential rotate printed the value:\n%s", out)
	}
	sb.fails(`no credential of vault team has the id or name "doc"; did you mean "docs"?`, "credential", "get", "team", "doc")

	// A credential's owner scope: given as the console's Owner field
	// spells it, shown in text and in --json, changed by a rotate.
	out = sb.ok("tok-scoped\n", "credential", "create", "team", "--name", "search", "--kind", "static_bearer", "--host", "search.example.com", "--scope", "tenant:slack:T0123", "--value-file", "-")
	if field(t, out, "scope") != "tenant:slack:T0123" {
		t.Fatalf("credential create --scope printed:\n%s", out)
	}
	type scoped struct {
		Name  string               `json:"name"`
		Scope core.CredentialScope `json:"scope"`
	}
	var scopes page[scoped]
	sb.okJSON(&scopes, "credential", "list", "team", "--json")
	want := map[string]core.CredentialScope{"docs": core.GlobalScope, "search": {Type: core.ScopeTenant, Tenant: "slack:T0123"}}
	if len(scopes.Data) != 2 || scopes.Data[0].Scope != want[scopes.Data[0].Name] || scopes.Data[1].Scope != want[scopes.Data[1].Name] {
		t.Fatalf("credential list --json scopes: %+v", scopes)
	}
	if list := sb.ok("", "credential", "list", "team"); !regexp.MustCompile(`(?m)^\S+\s+search\s+static_bearer\s+search\.example\.com\s+tenant:slack:T0123\s`).MatchString(list) ||
		!regexp.MustCompile(`(?m)\s+docs\s+static_bearer\s+docs\.example\.com\s+global\s`).MatchString(list) {
		t.Fatalf("credential list:\n%s", list)
	}
	var one scoped
	sb.okJSON(&one, "credential", "get", "team", "search", "--json")
	if one.Scope != want["search"] {
		t.Fatalf("credential get --json scope: %+v", one)
	}
	sb.ok("", "credential", "rotate", "team", "search", "--scope", "tenant_group:acme")
	one = scoped{}
	sb.okJSON(&one, "credential", "get", "team", "search", "--json")
	if one.Scope != (core.CredentialScope{Type: core.ScopeTenantGroup, TenantGroup: "acme"}) {
		t.Fatalf("credential get --json after rotate --scope: %+v", one)
	}
	for _, bad := range []string{"team:acme", "tenant", "global:acme"} {
		if _, errOut, code := sb.run("", "credential", "create", "team", "--name", "x", "--kind", "static_bearer", "--host", "x.example.com", "--scope", bad, "--value-file", file); code != 2 || !strings.Contains(errOut, `--scope "`+bad+`": want global, tenant:<tenant> or tenant_group:<group>`) {
			t.Fatalf("--scope %s: exit %d, %s", bad, code, errOut)
		}
	}
	sb.ok("", "credential", "delete", "team", "search")
	if _, errOut, code := sb.run("", "credential", "create", "team", "--name", "x", "--kind", "static_bearer", "--value", secret); code != 2 || !strings.Contains(errOut, "not defined: -value") {
		t.Fatalf("a value as a flag: exit %d, %s", code, errOut)
	}

	var del struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	sb.okJSON(&del, "credential", "delete", "team", "docs", "--json")
	if del.ID != credID || !del.Deleted {
		t.Fatalf("credential delete --json: %+v", del)
	}
	if out := sb.ok("", "vault", "delete", "team"); out != "deleted "+vaultID+"\n" {
		t.Fatalf("vault delete printed %q", out)
	}
	sb.okJSON(&vaults, "vault", "list", "--json")
	if len(vaults.Data) != 0 {
		t.Fatalf("vault list after delete: %+v", vaults)
	}
}

// TestCLIEnvironments: environments over a real serve, by id and name.
func TestCLIEnvironments(t *testing.T) {
	srv := startServer(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": "test-key"})
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)

	sb.ok("", "vault", "create", "team")
	credID := field(t, sb.ok("tok\n", "credential", "create", "team", "--name", "gh", "--kind", "static_bearer", "--host", "api.github.com", "--value-file", "-"), "id")
	sb.fails(`did you mean "gh"?`, "environment", "create", "tools", "--credential", "team/gj")
	out := sb.ok("", "environment", "create", "tools", "--apt", "jq", "--apt", "git", "--network", "allowlist", "--allow-host", "api.github.com", "--env", "A=1", "--credential", "team/gh")
	envID := field(t, out, "id")
	if field(t, out, "packages") != "apt: jq git" || field(t, out, "network") != "allowlist api.github.com" || field(t, out, "env") != "A=1" || field(t, out, "credentials") != credID {
		t.Fatalf("environment create printed:\n%s", out)
	}
	var envs page[idName]
	sb.okJSON(&envs, "environment", "list", "--json")
	if len(envs.Data) != 1 || envs.Data[0].ID != envID {
		t.Fatalf("environment list --json: %+v", envs)
	}
	var e struct {
		ID          string `json:"id"`
		Description string `json:"description"`
		Packages    struct {
			Apt []string `json:"apt"`
		} `json:"packages"`
	}
	sb.okJSON(&e, "environment", "update", "tools", "--description", "build tools", "--json")
	if e.ID != envID || e.Description != "build tools" || len(e.Packages.Apt) != 2 {
		t.Fatalf("environment update --json: %+v", e)
	}
	sb.okJSON(&e, "environment", "get", envID, "--json")
	if e.Description != "build tools" {
		t.Fatalf("environment get --json: %+v", e)
	}
	sb.fails(`did you mean "tools"?`, "environment", "get", "tool")
	// An agent names its environment by name too.
	sb.fails(`did you mean "tools"?`, "agent", "create", "--name", "builder", "--model", "anthropic/claude-test", "--environment", "tool")
	if out := sb.ok("", "agent", "create", "--name", "builder", "--model", "anthropic/claude-test", "--environment", "tools"); field(t, out, "environment") != envID {
		t.Fatalf("agent create --environment printed:\n%s", out)
	}
	sb.ok("", "agent", "update", "builder", "--environment", "")
	sb.ok("", "environment", "delete", "tools")
	sb.okJSON(&envs, "environment", "list", "--json")
	if len(envs.Data) != 0 {
		t.Fatalf("environment list after delete: %+v", envs)
	}
}

// TestCLIDestinations: webhook destinations and deliveries over a real
// serve.
func TestCLIDestinations(t *testing.T) {
	srv := startServer(t, t.TempDir(), nil)
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)

	out := sb.ok("", "destination", "create", "https://hooks.example.com/in", "--type", "session.status_changed")
	id := field(t, out, "id")
	if field(t, out, "status") != "active" || field(t, out, "types") != "session.status_changed" || !strings.Contains(field(t, out, "secret"), "(shown once)") {
		t.Fatalf("destination create printed:\n%s", out)
	}
	var ds page[struct {
		ID, URL, Status string
	}]
	sb.okJSON(&ds, "destination", "list", "--json")
	if len(ds.Data) != 1 || ds.Data[0].ID != id {
		t.Fatalf("destination list --json: %+v", ds)
	}
	if out := sb.ok("", "destination", "pause", id); field(t, out, "status") != "paused" {
		t.Fatalf("destination pause printed:\n%s", out)
	}
	var d struct{ ID, Status string }
	sb.okJSON(&d, "destination", "get", id, "--json")
	if d.ID != id || d.Status != "paused" {
		t.Fatalf("destination get --json: %+v", d)
	}
	var dels page[struct{ ID string }]
	sb.okJSON(&dels, "destination", "deliveries", "--destination", id, "--json")
	if len(dels.Data) != 0 {
		t.Fatalf("deliveries of a new destination: %+v", dels)
	}
	sb.fails("not found", "destination", "redeliver", "dlv_missing")
	sb.ok("", "destination", "delete", id)
	sb.okJSON(&ds, "destination", "list", "--json")
	if len(ds.Data) != 0 {
		t.Fatalf("destination list after delete: %+v", ds)
	}
}

// TestCLIInstallations: an installation of a Slack workspace, listed,
// shown by name, its policy set and the installation deleted.
func TestCLIInstallations(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0CLI", Name: "Acme"}, nil)
	sb := newCLI(t, "SWITCHBOARD_URL="+w.srv.url, "SWITCHBOARD_TOKEN="+adminToken)

	var ins page[struct {
		ID, Provider, Name string
	}]
	sb.okJSON(&ins, "installation", "list", "--provider", "slack", "--json")
	if len(ins.Data) != 1 || ins.Data[0].Provider != "slack" {
		t.Fatalf("installation list --json: %+v", ins)
	}
	id, name := ins.Data[0].ID, ins.Data[0].Name
	ref := id
	if name != "" {
		ref = name
	}
	if out := sb.ok("", "installation", "get", ref); field(t, out, "id") != id || field(t, out, "users") != "everyone" {
		t.Fatalf("installation get printed:\n%s", out)
	}
	out := sb.ok("", "installation", "policy", id, "--channel", "C0ONE", "--user", "U0A", "--user", "U0B")
	if field(t, out, "channels") != "C0ONE" || field(t, out, "users") != "U0A U0B" {
		t.Fatalf("installation policy printed:\n%s", out)
	}
	sb.fails(`did you mean "default"?`, "installation", "policy", id, "--agent", "defualt")
	sb.ok("", "installation", "delete", id)
	sb.okJSON(&ins, "installation", "list", "--json")
	if len(ins.Data) != 0 {
		t.Fatalf("installation list after delete: %+v", ins)
	}
}

// TestCLILinks: a session of a Slack installation gets another thread of
// that workspace as a link, lists it and removes it, over a real serve.
func TestCLILinks(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0LNK", Name: "Links"}, nil)
	sb := newCLI(t, "SWITCHBOARD_URL="+w.srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	w.ms.Push(modelserver.Step{Text: "on it"})
	m := w.fake.Human(w.team.ID, "C0LNK", "U0ALICE", "<@"+w.team.BotUserID+"> look", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	id := w.session(w.team.ID, "C0LNK", m.TS)
	other := "slack:" + w.team.ID + ":C0OTHER:1700000000.000100"

	type link struct {
		Key     string `json:"key"`
		AddedBy string `json:"added_by"`
	}
	var links page[link]
	sb.okJSON(&links, "link", "add", id, other, "--json")
	if len(links.Data) != 1 || links.Data[0].Key != other || links.Data[0].AddedBy != core.LinkedByAdmin {
		t.Fatalf("link add --json: %+v", links)
	}
	links = page[link]{}
	sb.okJSON(&links, "link", "list", id, "--json")
	if len(links.Data) != 1 || links.Data[0].Key != other {
		t.Fatalf("link list --json: %+v", links)
	}
	if list := sb.ok("", "link", "list", id); !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(other) + `\s+` + core.LinkedByAdmin + `\s`).MatchString(list) {
		t.Fatalf("link list:\n%s", list)
	}
	if got := w.srv.sessionsByKey(other); len(got) != 1 || got[0].ID != id {
		t.Fatalf("sessions of the linked key: %+v", got)
	}
	links = page[link]{}
	sb.okJSON(&links, "link", "remove", id, other, "--json")
	if len(links.Data) != 0 {
		t.Fatalf("link remove --json: %+v", links)
	}
	if list := sb.ok("", "link", "list", id); strings.Contains(list, other) {
		t.Fatalf("link list after remove:\n%s", list)
	}
	sb.fails("", "link", "remove", id, other)
}
