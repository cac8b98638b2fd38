package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeskills"
	"github.com/switchboardhq/switchboard/providers"
)

var (
	_ providers.Primer       = (*Primer)(nil)
	_ providers.SessionTools = (*Tools)(nil)
)

// pinnedStore has two skills, deploy at version 1 of two and review, and
// an agent pinning them.
func pinnedStore(t *testing.T) (*fakeskills.Store, *core.Agent) {
	t.Helper()
	f := fakeskills.New()
	d := f.MustCreate("deploy", "Ship a\nrelease.", "scripts/run.sh", "echo run", "logo.png", "\x89PNG\x00\x00", "big.txt", strings.Repeat("é", maxToolOutput))
	if _, err := f.UpdateSkill(context.Background(), "deploy", core.SkillUpload{Name: "deploy", Description: "v2", Files: map[string][]byte{"SKILL.md": []byte("v2")}}); err != nil {
		t.Fatal(err)
	}
	r := f.MustCreate("review", "Review a change.")
	a := &core.Agent{ID: "agt_1", Version: 3, Skills: []core.SkillRef{{ID: d.ID, Version: 1}, {ID: r.ID, Version: 1}}}
	f.AddAgent(a)
	f.AddAgent(&core.Agent{ID: "agt_1", Version: 1})
	f.AddSession(&core.Session{ID: "ses_1", Agent: core.AgentRef{ID: "agt_1", Version: 3}})
	f.AddSession(&core.Session{ID: "ses_0", Agent: core.AgentRef{ID: "agt_1", Version: 1}})
	return f, a
}

func TestSkillTool(t *testing.T) {
	f, a := pinnedStore(t)
	tools, err := (&Tools{Store: f}).Tools(context.Background(), &core.Session{}, a)
	if err != nil || len(tools) != 1 || tools[0].Def().Name != "skill" {
		t.Fatalf("tools %v, %v", tools, err)
	}
	if err := core.ValidToolName(tools[0].Def().Name); err != nil || !json.Valid(tools[0].Def().InputSchema) {
		t.Fatalf("definition: %v", err)
	}
	tool := tools[0]
	for _, tt := range []struct {
		name, input string
		isError     bool
		has, lacks  []string
	}{
		{name: "SKILL.md by default", input: `{"name":"deploy"}`,
			has: []string{"# deploy\n", `[Other files of skill "deploy", read with this tool's path: big.txt, logo.png, scripts/run.sh]`}, lacks: []string{"v2"}},
		{name: "a file", input: `{"name":"deploy","path":"scripts/run.sh"}`, has: []string{"echo run"}, lacks: []string{"Other files"}},
		{name: "a file spelled with dot", input: `{"name":"deploy","path":"./scripts/run.sh"}`, has: []string{"echo run"}},
		{name: "a skill with one file", input: `{"name":"review"}`, has: []string{"# review"}, lacks: []string{"Other files"}},
		{name: "a long file is cut", input: `{"name":"deploy","path":"big.txt"}`, has: []string{"[cut: the file is 204800 bytes; the first 102400 are shown]"}},
		{name: "unknown skill", input: `{"name":"deplyo"}`, isError: true, has: []string{`no skill named "deplyo"; your skills are "deploy", "review"`}},
		{name: "unknown file", input: `{"name":"deploy","path":"run.sh"}`, isError: true,
			has: []string{`skill "deploy" has no file "run.sh"; its files are "SKILL.md", "big.txt", "logo.png", "scripts/run.sh"`}},
		{name: "binary file", input: `{"name":"deploy","path":"logo.png"}`, isError: true, has: []string{`"logo.png" of skill "deploy" is a binary file (6 bytes)`}},
		{name: "not an object", input: `"deploy"`, isError: true, has: []string{"input must be a JSON object"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(context.Background(), core.ToolCall{Name: "skill", Input: json.RawMessage(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Output)
			}
			for _, h := range tt.has {
				if !strings.Contains(res.Output, h) {
					t.Errorf("output lacks %q: %.300s", h, res.Output)
				}
			}
			for _, l := range tt.lacks {
				if strings.Contains(res.Output, l) {
					t.Errorf("output has %q: %.300s", l, res.Output)
				}
			}
		})
	}

	f.FailFiles(errors.New("disk on fire"))
	if _, err := tool.Call(context.Background(), core.ToolCall{Input: json.RawMessage(`{"name":"deploy"}`)}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("a store failure: %v", err)
	}
	if tools, err := (&Tools{Store: f}).Tools(context.Background(), &core.Session{}, &core.Agent{}); err != nil || len(tools) != 0 {
		t.Fatalf("an agent without skills got %v, %v", tools, err)
	}
}

func TestPrimer(t *testing.T) {
	f, a := pinnedStore(t)
	for _, tt := range []struct {
		name    string
		sandbox bool
		has     []string
	}{
		{"with a sandbox", true, []string{"- deploy: Ship a release.\n  Files: /skills/deploy/SKILL.md\n", "- review: Review a change.\n  Files: /skills/review/SKILL.md\n"}},
		{"without", false, []string{"- deploy: Ship a release.\n  Files: call the skill tool with name \"deploy\"\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := (&Primer{Store: f, Sandbox: tt.sandbox}).Prime(context.Background(), &core.Session{}, a)
			if err != nil || len(evs) != 1 {
				t.Fatalf("events %v, %v", evs, err)
			}
			ev := evs[0]
			var body core.MessageBody
			if err := json.Unmarshal(ev.Body, &body); err != nil {
				t.Fatal(err)
			}
			if ev.Type != core.TypeUserMessage || ev.Level != core.LevelInternal || ev.Actor != core.ActorSystem || body.Kind != core.MessageKindInstructions {
				t.Fatalf("event %+v %+v", ev, body)
			}
			for _, h := range tt.has {
				if !strings.Contains(body.Text, h) {
					t.Errorf("text lacks %q:\n%s", h, body.Text)
				}
			}
		})
	}
	if evs, err := (&Primer{Store: f}).Prime(context.Background(), &core.Session{}, &core.Agent{}); err != nil || evs != nil {
		t.Fatalf("an agent without skills: %v, %v", evs, err)
	}
	// A skill deleted since is left out; none left, nothing is said.
	gone := &core.Agent{Skills: []core.SkillRef{{ID: "skl_999", Version: 1}}}
	if evs, err := (&Primer{Store: f}).Prime(context.Background(), &core.Session{}, gone); err != nil || evs != nil {
		t.Fatalf("deleted skills: %v, %v", evs, err)
	}
}

func TestSessionSkills(t *testing.T) {
	f, _ := pinnedStore(t)
	src := &Source{Store: f}
	bundles, err := src.SessionSkills(context.Background(), "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) != 2 || bundles[0].Skill.Name != "deploy" || bundles[0].Skill.Version != 1 || bundles[1].Skill.Name != "review" {
		t.Fatalf("bundles %+v", bundles)
	}
	if got := string(bundles[0].Files["scripts/run.sh"]); got != "echo run" || len(bundles[0].Files) != 4 {
		t.Fatalf("files of deploy: %d, run.sh %q", len(bundles[0].Files), got)
	}
	if b, err := src.SessionSkills(context.Background(), "ses_0"); err != nil || len(b) != 0 {
		t.Fatalf("an agent without skills: %v, %v", b, err)
	}
	if _, err := src.SessionSkills(context.Background(), "ses_none"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	f.FailFiles(errors.New("disk on fire"))
	if _, err := src.SessionSkills(context.Background(), "ses_1"); err == nil || !strings.Contains(err.Error(), `skill deploy version 1, file "SKILL.md": disk on fire`) {
		t.Fatalf("a store failure: %v", err)
	}
}
