package main_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleAgentsAndEnvironments: through the console's forms against a
// real serve, an environment is created, an agent is created naming it
// and edited into version 2 (the API holds it, the diff page shows the
// change, and a form opened at version 1 is refused), and the environment
// is deleted after its confirmation.
func TestConsoleAgentsAndEnvironments(t *testing.T) {
	// The agents' model needs a client; no turn calls it.
	srv := startServer(t, t.TempDir(), map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1/"})
	cookie := consoleSignIn(t, srv.url)
	_, page := consoleGet(t, srv.url+"/console/agents", cookie)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the agents page:\n%s", page)
	}
	csrf := m[1]
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("csrf", csrf)
		return consolePost(t, srv.url+path, cookie, form)
	}
	// id is the id of the record the API holds under name.
	id := func(kind, name string) string {
		t.Helper()
		code, raw := srv.do("GET", "/v1/"+kind+"/"+name, nil)
		var rec struct {
			ID string `json:"id"`
		}
		if code != 200 || json.Unmarshal(raw, &rec) != nil {
			t.Fatalf("%s %s in the API: %d %s", kind, name, code, raw)
		}
		return rec.ID
	}

	// An environment, through its form.
	code, body := post("/console/environments", url.Values{"name": {"tools"}, "apt": {"jq"}, "mode": {"none"}, "memory_mb": {"512"}})
	if code != http.StatusSeeOther {
		t.Fatalf("create the environment: %d\n%s", code, body)
	}
	envID := id("environments", "tools")
	code, raw := srv.do("GET", "/v1/environments/"+envID, nil)
	var env struct {
		Name      string                 `json:"name"`
		Packages  struct{ Apt []string } `json:"packages"`
		Resources struct {
			MemoryMB int `json:"memory_mb"`
		} `json:"resources"`
	}
	if code != 200 || json.Unmarshal(raw, &env) != nil || env.Name != "tools" || len(env.Packages.Apt) != 1 || env.Resources.MemoryMB != 512 {
		t.Fatalf("the environment in the API: %d %s", code, raw)
	}

	// An agent, through its form; a refusal first, under its field.
	agent := url.Values{"name": {"helper"}, "model": {"nowhere/x"}, "system": {"Be brief.\nCite sources."}, "environment": {"tools"}, "max_steps": {"6"}}
	code, body = post("/console/agents", agent)
	if code != http.StatusBadRequest || !strings.Contains(body, `id="agent-model-error"`) || !strings.Contains(body, `value="helper"`) {
		t.Fatalf("an unknown model: %d\n%s", code, body)
	}
	agent.Set("model", "anthropic/claude-test")
	if code, body = post("/console/agents", agent); code != http.StatusSeeOther {
		t.Fatalf("create the agent: %d\n%s", code, body)
	}
	agentID := id("agents", "helper")

	// Edited at version 1, it becomes version 2.
	agent.Set("version", "1")
	agent.Set("system", "Be brief.\nBe kind.")
	if code, body = post("/console/agents/"+agentID, agent); code != http.StatusSeeOther {
		t.Fatalf("save the agent: %d\n%s", code, body)
	}
	code, raw = srv.do("GET", "/v1/agents/"+agentID, nil)
	var a struct {
		Version     int    `json:"version"`
		System      string `json:"system"`
		Environment string `json:"environment"`
		Limits      struct {
			MaxSteps int `json:"max_steps"`
		} `json:"limits"`
	}
	if code != 200 || json.Unmarshal(raw, &a) != nil || a.Version != 2 || a.System != "Be brief.\nBe kind." || a.Environment != "tools" || a.Limits.MaxSteps != 6 {
		t.Fatalf("the agent in the API: %d %s", code, raw)
	}

	// A second save from the form opened at version 1 is refused.
	agent.Set("system", "Stale.")
	code, body = post("/console/agents/"+agentID, agent)
	if code != http.StatusConflict || !strings.Contains(body, `id="version-conflict"`) {
		t.Fatalf("a stale save: %d\n%s", code, body)
	}
	if _, raw = srv.do("GET", "/v1/agents/"+agentID, nil); json.Unmarshal(raw, &a) != nil || a.Version != 2 {
		t.Fatalf("a stale save changed the agent: %s", raw)
	}

	// The diff shows the change; the edit page counts no sessions yet.
	code, body = consoleGet(t, srv.url+"/console/agents/"+agentID+"/diff", cookie)
	if code != 200 || !strings.Contains(body, `id="agent-diff"`) ||
		!strings.Contains(body, `<span class="visually-hidden">removed: </span>Cite sources.</del>`) ||
		!strings.Contains(body, `<span class="visually-hidden">added: </span>Be kind.</ins>`) {
		t.Fatalf("the diff page: %d\n%s", code, body)
	}
	code, body = consoleGet(t, srv.url+"/console/agents", cookie)
	if code != 200 || !strings.Contains(body, `<a href="agents/`+agentID+`">helper</a>`) {
		t.Fatalf("the agents list: %d\n%s", code, body)
	}
	code, body = consoleGet(t, srv.url+"/console/agents/"+agentID, cookie)
	if code != 200 || !strings.Contains(body, `<tr data-version="2">`) || !strings.Contains(body, `<option value="tools">`) {
		t.Fatalf("the agent page: %d\n%s", code, body)
	}

	// The environment's deletion names the agent, then deletes it.
	code, body = consoleGet(t, srv.url+"/console/environments/"+envID+"/delete", cookie)
	if code != 200 || !strings.Contains(body, `>helper</a>`) {
		t.Fatalf("the delete confirmation: %d\n%s", code, body)
	}
	if code, body = post("/console/environments/"+envID+"/delete", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("delete: %d\n%s", code, body)
	}
	if code, _ := srv.do("GET", "/v1/environments/"+envID, nil); code != http.StatusNotFound {
		t.Fatalf("the environment after its deletion: %d", code)
	}
}
