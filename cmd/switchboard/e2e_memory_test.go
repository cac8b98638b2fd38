package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestMemoryAcrossSlackThreads: in workspace one, a session's model writes
// /memories/deploys.md (twice); a new thread in the same workspace reads
// it back with the memory tool; a thread in workspace two sees an empty
// store; the admin API shows both versions with the session that wrote
// each, and a revert restores the first.
func TestMemoryAcrossSlackThreads(t *testing.T) {
	w := startSlackOAuth(t)
	w.install(fakeslack.Grant{Team: fakeslack.Team{ID: "T0ONE", Name: "One"}, Installer: "U0ADMIN"})
	w.install(fakeslack.Grant{Team: fakeslack.Team{ID: "T0TWO", Name: "Two"}, Installer: "U0ADMIN2"})
	one, two := w.teamByID("T0ONE"), w.teamByID("T0TWO")

	code, raw := w.srv.do("POST", "/v1/memory_stores", map[string]any{"name": "team-notes", "description": "What the team told the agent"})
	if code != 201 {
		t.Fatalf("create the memory store: %d %s", code, raw)
	}
	var store struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &store)
	code, raw = w.srv.do("GET", "/v1/agents/default", nil)
	if code != 200 {
		t.Fatalf("get the default agent: %d %s", code, raw)
	}
	var agent struct {
		Version int `json:"version"`
	}
	mustJSON(t, raw, &agent)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"version": agent.Version, "memory_stores": []map[string]any{{"id": store.ID}}}); code != 200 {
		t.Fatalf("give the default agent the store: %d %s", code, raw)
	}

	// mention runs one thread to its reply and returns its session.
	mention := func(team fakeslack.Team, channel, text, reply string) string {
		t.Helper()
		m := w.fake.Human(team.ID, channel, "U0PERSON", "<@"+team.BotUserID+"> "+text, "")
		w.team = team
		if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
			t.Fatalf("mention in %s: %d", team.ID, code)
		}
		w.waitReply(team, channel, m.TS, reply)
		id := w.session(team.ID, channel, m.TS)
		w.srv.waitIdle(id)
		return id
	}
	memory := func(id string, input map[string]any) modelserver.ToolCall {
		return modelserver.ToolCall{ID: id, Name: "memory", Input: input}
	}

	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_create", map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": "Deploys go out on Tuesdays.\n"})}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_edit", map[string]any{"command": "str_replace", "path": "/memories/deploys.md", "old_str": "Tuesdays", "new_str": "Tuesdays and Thursdays"})}},
		modelserver.Step{Text: "Noted."},
	)
	writer := mention(one, "C0OPS", "remember: deploys on Tuesdays, and Thursdays too", "Noted.")
	res := results(t, w.srv.events(writer))
	for _, id := range []string{"toolu_create", "toolu_edit"} {
		if r := res[id]; r.IsError {
			t.Fatalf("%s: %+v", id, r)
		}
	}

	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_view", map[string]any{"command": "view", "path": "/memories/deploys.md"})}},
		modelserver.Step{Text: "Tuesdays and Thursdays."},
	)
	reader := mention(one, "C0DEV", "when do we deploy?", "Tuesdays and Thursdays.")
	if r := results(t, w.srv.events(reader))["toolu_view"]; r.IsError || !strings.Contains(r.Output, "Deploys go out on Tuesdays and Thursdays.") {
		t.Fatalf("a new thread of the same workspace reading the memory: %+v", r)
	}

	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{
			memory("toolu_dir", map[string]any{"command": "view", "path": "/memories"}),
			memory("toolu_file", map[string]any{"command": "view", "path": "/memories/deploys.md"}),
		}},
		modelserver.Step{Text: "Nothing remembered here."},
	)
	other := mention(two, "C0TWO", "when do we deploy?", "Nothing remembered here.")
	res = results(t, w.srv.events(other))
	if r := res["toolu_dir"]; r.IsError || strings.Contains(r.Output, "deploys.md") {
		t.Fatalf("workspace two's listing shows workspace one's memory: %+v", r)
	}
	if r := res["toolu_file"]; !r.IsError || strings.Contains(r.Output, "Tuesdays") {
		t.Fatalf("workspace two read workspace one's memory: %+v", r)
	}

	// The admin API: both versions, each with the session that wrote it.
	code, raw = w.srv.do("GET", "/v1/memory_stores/"+store.ID+"/history/deploys.md?tenant=slack:T0ONE", nil)
	if code != 200 {
		t.Fatalf("history: %d %s", code, raw)
	}
	var history struct {
		Data []struct {
			Version   int    `json:"version"`
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	mustJSON(t, raw, &history)
	if len(history.Data) != 2 || history.Data[0].Version != 2 || history.Data[1].Version != 1 ||
		history.Data[0].SessionID != writer || history.Data[1].SessionID != writer {
		t.Fatalf("history %s, want versions 2 and 1 by %s", raw, writer)
	}
	if code, raw := w.srv.do("GET", "/v1/memory_stores/"+store.ID+"/history/deploys.md?tenant=slack:T0TWO", nil); code != 404 {
		t.Fatalf("workspace two's history of the file: %d %s", code, raw)
	}
	code, raw = w.srv.do("POST", "/v1/memory_stores/"+store.ID+"/revert", map[string]any{"tenant": "slack:T0ONE", "path": "deploys.md", "version": 1})
	if code != 200 {
		t.Fatalf("revert: %d %s", code, raw)
	}
	code, raw = w.srv.do("GET", "/v1/memory_stores/"+store.ID+"/files/deploys.md?tenant=slack:T0ONE", nil)
	if code != 200 {
		t.Fatalf("read after revert: %d %s", code, raw)
	}
	var file struct {
		Version int    `json:"version"`
		Content string `json:"content"`
	}
	mustJSON(t, raw, &file)
	if file.Version != 3 || file.Content != "Deploys go out on Tuesdays.\n" {
		t.Fatalf("after the revert: %s", raw)
	}
}
