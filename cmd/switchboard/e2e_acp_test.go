package main_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// acpImage is the sandbox test image with the ACP agents the tests run:
// the ACP SDK's own example agent, built from the module proxy, and the
// project's scripted agent.
func acpImage(t *testing.T) string {
	return sandboximage.ForTestWith(t, acpPrograms)
}

// acpPrograms are the ACP agents of the tests' images.
var acpPrograms = map[string]string{
	"acp-example-agent": "github.com/coder/acp-go-sdk/example/agent",
	"scripted-acp":      "github.com/switchboardhq/switchboard/fixtures/acpagent/cmd/scripted-acp",
}

// startACPSlack is a Slack world whose default agent runs command as an
// ACP agent in Docker sandboxes of the ACP test image.
// extra are pairs of variable and value (the image, say).
func startACPSlack(t *testing.T, team string, runtime map[string]any, extra ...string) *slackWorld {
	t.Helper()
	env := map[string]string{"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_MEMORY_MB": "256"}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	if env["SWITCHBOARD_SANDBOX_IMAGE"] == "" {
		env["SWITCHBOARD_SANDBOX_IMAGE"] = acpImage(t)
	}
	w := startSlack(t, fakeslack.Team{ID: team, Name: "Acme"}, env)
	deploymentOf(t, w.srv.dataDir)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"runtime": runtime}); code != 200 {
		t.Fatalf("make the default agent an ACP agent: %d %s", code, raw)
	}
	return w
}

// TestACPExampleAgentInSlack is the ACP runtime's acceptance 1: the ACP
// SDK's example agent, a third-party agent, driven end to end from a
// Slack thread. Its message, tool calls and permission request are in
// the log and the thread; Allow in Slack lets it go on; one answer is
// posted. SWITCHBOARD_TEST_ACP_COMMAND runs the same against a real
// agent command found in the sandbox image.
func TestACPExampleAgentInSlack(t *testing.T) {
	w := startACPSlack(t, "T0ACP1", map[string]any{"kind": "acp", "command": []string{"acp-example-agent"}})
	m := w.fake.Human(w.team.ID, "C0GENERAL", "U0ALICE", "<@"+w.team.BotUserID+"> tidy up the config please", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("app_mention: %d", code)
	}
	id := w.session(w.team.ID, m.Channel, m.TS)
	ask := w.waitReply(w.team, m.Channel, m.TS, "Allow this?")
	if !strings.Contains(ask.Text, "Modifying critical configuration file") {
		t.Fatalf("the permission request in the thread: %q", ask.Text)
	}
	st := w.srv.session(id)
	if st.Status != "awaiting_input" || st.StopReason == nil || *st.StopReason != "requires_action" {
		t.Fatalf("session while the agent waits: %+v", st)
	}
	if code := w.click(w.team, "U0ALICE", ask, "sb_allow"); code != 200 {
		t.Fatalf("Allow: %d", code)
	}
	answer := w.waitReply(w.team, m.Channel, m.TS, "successfully updated the configuration")
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	if n := len(w.botReplies(w.team, m.Channel, m.TS, "successfully updated the configuration")); n != 1 {
		t.Fatalf("%d answers posted, want 1", n)
	}
	if !strings.Contains(answer.Text, "Perfect!") {
		t.Fatalf("answer %q", answer.Text)
	}
	var titles []string
	for _, e := range evs {
		if e.Type == "agent.tool_use" {
			var b struct{ Name string }
			mustJSON(t, e.Body, &b)
			titles = append(titles, b.Name)
		}
	}
	if strings.Join(titles, "|") != "Reading project files|Modifying critical configuration file" {
		t.Fatalf("tool calls %v (log %v)", titles, types(evs))
	}
	if count(evs, "agent.tool_result") != 2 || count(evs, "user.tool_confirmation") != 1 || count(evs, "session.runtime_started") != 1 {
		t.Fatalf("log %v", types(evs))
	}
	final := evs[len(evs)-3]
	if final.Type != "agent.message" || final.Level != "user" {
		t.Fatalf("the turn does not end with its answer: %v", types(evs))
	}
}

// TestACPRealAgentCommand runs acceptance 1's mention against a real ACP
// agent command when SWITCHBOARD_TEST_ACP_COMMAND names one (installed
// in SWITCHBOARD_TEST_ACP_IMAGE, a sandbox image that has it): the
// answer reaches the thread once.
func TestACPRealAgentCommand(t *testing.T) {
	command, image := os.Getenv("SWITCHBOARD_TEST_ACP_COMMAND"), os.Getenv("SWITCHBOARD_TEST_ACP_IMAGE")
	if command == "" || image == "" {
		t.Skip("SWITCHBOARD_TEST_ACP_COMMAND and SWITCHBOARD_TEST_ACP_IMAGE are not set: no real ACP agent to run (agents from npm cannot be installed here)")
	}
	var argv []string
	if err := json.Unmarshal([]byte(command), &argv); err != nil {
		argv = strings.Fields(command)
	}
	w := startSlack(t, fakeslack.Team{ID: "T0ACPR", Name: "Acme"}, map[string]string{
		"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_IMAGE": image,
	})
	deploymentOf(t, w.srv.dataDir)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"runtime": map[string]any{"kind": "acp", "command": argv,
		"permissions": map[string]string{"edit": "always_allow", "execute": "always_allow"}}}); code != 200 {
		t.Fatalf("make the default agent an ACP agent: %d %s", code, raw)
	}
	m := w.fake.Human(w.team.ID, "C0GENERAL", "U0ALICE", "<@"+w.team.BotUserID+"> say hello in one word", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("app_mention: %d", code)
	}
	id := w.session(w.team.ID, m.Channel, m.TS)
	_, evs := w.srv.waitIdle(id)
	if count(evs, "turn.completed") != 1 || count(evs, "session.error") != 0 {
		t.Fatalf("log %v", types(evs))
	}
}
