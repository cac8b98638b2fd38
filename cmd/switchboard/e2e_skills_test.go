package main_test

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// skillZip is a skill folder zipped the way people zip one: under its
// own folder.
func skillZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, text := range files {
		f, err := zw.Create("deploy/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSkillsInTheSandbox: a skill uploaded as a zip and bound to an agent
// (a new version) is listed, by name and description, in a new session's
// first model request; the model reads its SKILL.md from
// /skills/<name>/ in the sandbox and cannot write there; a session
// created before, pinned to the previous agent version, neither sees it
// in its prompt nor has it in its sandbox.
func TestSkillsInTheSandbox(t *testing.T) {
	ms, hs := modelserver.Start(t)
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, sandboxEnv(t, hs.URL))
	deploymentOf(t, dataDir)

	code, raw := srv.do("POST", "/v1/agents", map[string]any{"name": "builder", "model": "anthropic/claude-test", "system": "You build things."})
	if code != 201 {
		t.Fatalf("create agent: %d %s", code, raw)
	}
	var agent struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
		Skills  []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
		} `json:"skills"`
	}
	mustJSON(t, raw, &agent)
	// The old session exists before the skill; it runs its first turn
	// later, still on version 1.
	code, raw = srv.do("POST", "/v1/sessions", map[string]any{"agent": "builder"})
	if code != 201 {
		t.Fatalf("create the old session: %d %s", code, raw)
	}
	var old struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &old)

	const body = "# Deploy\nRun ./scripts/ship.sh, then check the dashboard.\n"
	code, raw = srv.do("POST", "/v1/skills", skillZip(t, map[string]string{
		"SKILL.md":        "---\nname: deploy\ndescription: Ship the service to production safely.\n---\n" + body,
		"scripts/ship.sh": "#!/bin/sh\necho shipped\n",
	}), "Content-Type", "application/zip")
	if code != 201 {
		t.Fatalf("upload the skill: %d %s", code, raw)
	}
	var skill struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	mustJSON(t, raw, &skill)
	if skill.Name != "deploy" || skill.Version != 1 {
		t.Fatalf("uploaded skill %+v", skill)
	}
	code, raw = srv.do("POST", "/v1/agents/builder", map[string]any{"version": 1, "skills": []map[string]any{{"id": skill.ID}}})
	if code != 200 {
		t.Fatalf("bind the skill: %d %s", code, raw)
	}
	mustJSON(t, raw, &agent)
	if agent.Version != 2 || len(agent.Skills) != 1 || agent.Skills[0].ID != skill.ID || agent.Skills[0].Version != 1 {
		t.Fatalf("agent after binding: %+v (the skill's version must be stored resolved)", agent)
	}

	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_read", Name: "read", Input: map[string]any{"path": "/skills/deploy/SKILL.md"}}}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_write", Name: "write", Input: map[string]any{"path": "/skills/deploy/SKILL.md", "content": "overwritten"}}}},
		modelserver.Step{Text: "Read the deploy skill."},
	)
	code, raw = srv.do("POST", "/v1/sessions", map[string]any{"agent": "builder", "input": "ship it"})
	if code != 201 {
		t.Fatalf("create the new session: %d %s", code, raw)
	}
	var fresh struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &fresh)
	_, evs := srv.waitIdle(fresh.ID)
	reqs := ms.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for _, want := range []string{"You build things.", "deploy: Ship the service to production safely.", "/skills/deploy/SKILL.md"} {
		if !strings.Contains(reqs[0].System, want) {
			t.Errorf("the first request's system prompt lacks %q:\n%s", want, reqs[0].System)
		}
	}
	if strings.Contains(reqs[0].System, "check the dashboard") {
		t.Error("the skill's body was inlined; only its name, description and place belong in the prompt")
	}
	res := results(t, evs)
	if r := res["toolu_read"]; r.IsError || !strings.Contains(r.Output, "check the dashboard") {
		t.Fatalf("read /skills/deploy/SKILL.md: %+v", r)
	}
	if r := res["toolu_write"]; !r.IsError {
		t.Fatalf("writing under /skills succeeded: %+v", r)
	}

	// The old session's first turn runs on version 1: no skill.
	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_ls", "ls /skills/deploy 2>&1; echo exit=$?")}},
		modelserver.Step{Text: "No skills here."},
	)
	if code, raw := srv.do("POST", "/v1/sessions/"+old.ID+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "ship it"}}}); code != 202 {
		t.Fatalf("message the old session: %d %s", code, raw)
	}
	_, evs = srv.waitIdle(old.ID)
	reqs = ms.Requests()
	if sys := reqs[3].System; strings.Contains(sys, "deploy") {
		t.Errorf("the session pinned to version 1 was told of the skill:\n%s", sys)
	}
	if r := results(t, evs)["toolu_ls"]; strings.Contains(r.Output, "SKILL.md") || !strings.Contains(r.Output, "exit=2") {
		t.Errorf("the old session's sandbox has the skill: %+v", r)
	}
}
