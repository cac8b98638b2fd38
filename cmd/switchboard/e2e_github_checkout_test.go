package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubRepositoryInstructions: the gateway clones a GitHub session's
// repository into its sandbox before the first turn, through the egress
// proxy, and the model's first request carries the repository's AGENTS.md
// (labelled as repository content) and its skills (name, description and
// where SKILL.md is), while the skill's body stays in the workspace for
// the model to read.
func TestGitHubRepositoryInstructions(t *testing.T) {
	w, _ := startGitHubGit(t, map[string]string{
		"widget.go": "package widget\n",
		"AGENTS.md": "# Conventions\nRun `make lint` before every commit.\n",
		".agents/skills/release/SKILL.md": "---\nname: release\ndescription: Cut a widgets release and write its notes.\n---\n" +
			"# Release\nTag with vX.Y.Z; the body of this skill is not in the prompt.\n",
	})
	deploymentOf(t, w.srv.dataDir) // removes the sandbox when the test ends
	w.fake.SetPermission("carol", "write")
	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_skill", Name: "read",
			Input: map[string]any{"path": "/workspace/widgets/.agents/skills/release/SKILL.md"}}}},
		modelserver.Step{Text: "Ready to release."},
	)
	comment := w.fake.AddComment("acme/widgets", 7, false, "carol", "@sb-agent cut a release")
	if code := w.deliver("issue_comment", "", issueComment(7, false, comment, "carol", "@sb-agent cut a release"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	id := w.session("github:acme/widgets#7")
	_, evs := w.srv.waitIdle(id)

	reqs := w.ms.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	system := reqs[0].System
	for _, want := range []string{
		"Run `make lint` before every commit.", // AGENTS.md
		"repository content",                   // labelled as such
		"release: Cut a widgets release and write its notes.",
		"/workspace/widgets/.agents/skills/release/SKILL.md",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("the first request's system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "Tag with vX.Y.Z") {
		t.Error("a skill's body was inlined in the system prompt; only its name and description belong there")
	}
	if r := results(t, evs)["toolu_skill"]; r.IsError || !strings.Contains(r.Output, "Tag with vX.Y.Z") {
		t.Fatalf("reading the repository's skill in the sandbox: %+v", r)
	}
}
