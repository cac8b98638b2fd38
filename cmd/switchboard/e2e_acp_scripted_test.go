package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox"
)

// scripted is the runtime of an agent that runs the project's scripted
// ACP agent on script.
func scripted(t *testing.T, script acpagent.Script) map[string]any {
	raw, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"kind": "acp", "command": []string{"scripted-acp"}, "env": map[string]string{"SCRIPTED_ACP_SCRIPT_JSON": string(raw)}}
}

// runtimeStarts are the session's session.runtime_started bodies.
func runtimeStarts(t *testing.T, evs []event) []struct {
	AgentSession string `json:"agent_session"`
	How          string `json:"how"`
} {
	var out []struct {
		AgentSession string `json:"agent_session"`
		How          string `json:"how"`
	}
	for _, e := range evs {
		if e.Type == "session.runtime_started" {
			var b struct {
				AgentSession string `json:"agent_session"`
				How          string `json:"how"`
			}
			mustJSON(t, e.Body, &b)
			out = append(out, b)
		}
	}
	return out
}

// mentionACP mentions the bot in a new thread and returns the mention and
// its session.
func mentionACP(t *testing.T, w *slackWorld, channel, text string) (fakeslack.Message, string) {
	t.Helper()
	m := w.fake.Human(w.team.ID, channel, "U0ALICE", "<@"+w.team.BotUserID+"> "+text, "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("app_mention: %d", code)
	}
	return m, w.session(w.team.ID, channel, m.TS)
}

// toolDone is the step that lets a test see the turn running: its call and
// result are logged as they happen.
func toolDone(title string) acpagent.Step {
	return acpagent.Step{Tool: &acpagent.Tool{ID: "call_" + strings.ReplaceAll(title, " ", "_"), Title: title, Kind: "read", Output: "ok"}}
}

// TestACPStopInSlack is acceptance 3's Stop: the Stop reaction cancels a
// running ACP turn (session/cancel, turn.completed canceled); an agent
// that ignores the cancel is killed after the grace period.
func TestACPStopInSlack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wait  acpagent.Step
		error bool
	}{
		{"cancel honoured", acpagent.Step{WaitCancel: true}, false},
		{"cancel ignored", acpagent.Step{IgnoreCancel: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startACPSlack(t, "T0ACPS", scripted(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{toolDone("Reading the code"), tc.wait}}}}),
				"SWITCHBOARD_ACP_CANCEL_GRACE_SECONDS", "1")
			m, id := mentionACP(t, w, "C0STOP", "take forever")
			w.srv.waitFor(id, "the turn running", func(_ sessionState, evs []event) bool { return count(evs, "agent.tool_result") == 1 })
			stopped := time.Now()
			if code, _ := w.event(fakeslack.ReactionAdded("U0ALICE", "octagonal_sign", "C0STOP", m.TS)); code != 200 {
				t.Fatalf("reaction: %d", code)
			}
			st, evs := w.srv.waitIdle(id)
			t.Logf("stop to idle: %v", time.Since(stopped))
			if st.StopReason == nil || *st.StopReason != "canceled" || count(evs, "user.interrupt") != 1 {
				t.Fatalf("session %+v, log %v", st, types(evs))
			}
			if got := count(evs, "session.error"); (got == 1) != tc.error {
				t.Fatalf("%d errors, log %v", got, types(evs))
			}
			w.waitReply(w.team, "C0STOP", m.TS, "Stopped")
		})
	}
}

// TestACPLoadAfterHibernation is acceptance 6: with the scripted agent
// advertising loadSession, the turn after the sandbox hibernated starts a
// new agent process that loads the same ACP session.
func TestACPLoadAfterHibernation(t *testing.T) {
	w := startACPSlack(t, "T0ACPH", scripted(t, acpagent.Script{LoadSession: true, Turns: []acpagent.Turn{
		{Steps: []acpagent.Step{{Say: "The answer is 42."}}},
		{Steps: []acpagent.Step{{Say: "Still 42, after a nap."}}},
	}}), "SWITCHBOARD_SANDBOX_IDLE_SECONDS", "1")
	cli, dep := deploymentOf(t, w.srv.dataDir)
	m, id := mentionACP(t, w, "C0NAP", "what is the answer?")
	w.waitReply(w.team, "C0NAP", m.TS, "The answer is 42.")
	w.srv.waitIdle(id)
	// The sandbox hibernates: its container stops, and the agent with it.
	deadline := time.Now().Add(patience)
	for {
		c, ok := sandboxes(t, cli, dep)[id]
		if ok && c.State != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox never hibernated: %+v", c)
		}
		time.Sleep(50 * time.Millisecond)
	}
	reply := w.fake.Human(w.team.ID, "C0NAP", "U0ALICE", "and now?", m.TS)
	if code, _ := w.event(fakeslack.MessageEvent(reply, "channel")); code != 200 {
		t.Fatalf("reply: %d", code)
	}
	w.waitReply(w.team, "C0NAP", m.TS, "Still 42, after a nap.")
	_, evs := w.srv.waitIdle(id)
	starts := runtimeStarts(t, evs)
	if len(starts) != 2 || starts[0].How != "new" || starts[1].How != "loaded" || starts[1].AgentSession != starts[0].AgentSession {
		t.Fatalf("runtime starts %+v", starts)
	}
}

// TestACPPermissionWaitExpires is acceptance 6b: a permission request
// left unanswered past the wait limit ends the turn requires_action and
// the sandbox hibernates; Allow given afterwards starts a turn that
// resumes the work.
func TestACPPermissionWaitExpires(t *testing.T) {
	w := startACPSlack(t, "T0ACPW", scripted(t, acpagent.Script{LoadSession: true, Turns: []acpagent.Turn{
		// The decision's prompt names the call, so it is matched first.
		{Match: "has now allowed", Steps: []acpagent.Step{{Say: "Config updated after the wait."}}},
		{Match: "config", Steps: []acpagent.Step{{Permission: &acpagent.Tool{ID: "call_cfg", Title: "Modifying config.json", Kind: "edit"}}}},
	}}), "SWITCHBOARD_ACP_PERMISSION_WAIT_SECONDS", "1", "SWITCHBOARD_SANDBOX_IDLE_SECONDS", "1")
	cli, dep := deploymentOf(t, w.srv.dataDir)
	m, id := mentionACP(t, w, "C0WAIT", "fix the config")
	ask := w.waitReply(w.team, "C0WAIT", m.TS, "Allow this?")
	st, evs := w.srv.waitFor(id, "the turn ended waiting", func(st sessionState, evs []event) bool {
		return count(evs, "turn.completed") == 1 && st.Status == "awaiting_input"
	})
	if st.StopReason == nil || *st.StopReason != "requires_action" {
		t.Fatalf("session %+v, log %v", st, types(evs))
	}
	deadline := time.Now().Add(patience)
	for {
		if c, ok := sandboxes(t, cli, dep)[id]; ok && c.State != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox never hibernated after the wait expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := w.click(w.team, "U0ALICE", ask, "sb_allow"); code != 200 {
		t.Fatalf("Allow: %d", code)
	}
	w.srv.waitFor(id, "the second turn", func(_ sessionState, evs []event) bool { return count(evs, "turn.completed") == 2 })
	w.waitReply(w.team, "C0WAIT", m.TS, "Config updated after the wait.")
	_, evs = w.srv.waitIdle(id)
	if n := count(evs, "turn.completed"); n != 2 {
		t.Fatalf("%d turns, log %v", n, types(evs))
	}
	if n := len(w.botReplies(w.team, "C0WAIT", m.TS, "Allow this?")); n != 1 {
		t.Fatalf("asked %d times", n)
	}
}

// TestACPResumesAfterSIGKILL is acceptance 3's crash: the gateway killed
// mid-turn resumes the turn after its restart with a new agent process
// that loads the ACP session (the log says so), and the thread gets
// exactly one answer.
func TestACPResumesAfterSIGKILL(t *testing.T) {
	w := startACPSlack(t, "T0ACPK", scripted(t, acpagent.Script{LoadSession: true, Turns: []acpagent.Turn{
		{Steps: []acpagent.Step{toolDone("Reading the parser"), {WaitCancel: true}}},
		{Steps: []acpagent.Step{{Say: "Refactored, after the restart."}}},
	}}))
	cli, dep := deploymentOf(t, w.srv.dataDir)
	m, id := mentionACP(t, w, "C0KILL", "refactor the parser")
	w.srv.waitFor(id, "the turn running", func(_ sessionState, evs []event) bool { return count(evs, "agent.tool_result") == 1 })
	w.srv.kill()
	w.srv = w.srv.restart()
	w.waitReply(w.team, "C0KILL", m.TS, "Refactored, after the restart.")
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	if n := len(w.botReplies(w.team, "C0KILL", m.TS, "Refactored")); n != 1 {
		t.Fatalf("%d answers", n)
	}
	starts := runtimeStarts(t, evs)
	if len(starts) != 2 || starts[1].How != "loaded" || count(evs, "turn.started") != 1 || count(evs, "turn.completed") != 1 {
		t.Fatalf("runtime starts %+v, log %v", starts, types(evs))
	}
	// The agent process of the killed gateway is gone: only the new one
	// answered, and nothing of the first is left running.
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{Filters: client.Filters{}.Add("label", sandbox.LabelDeployment+"="+dep)})
	if err != nil || len(res.Items) != 1 {
		t.Fatalf("containers %+v (%v)", res.Items, err)
	}
}

// TestACPAgentFailures is acceptance 4 in Docker sandboxes: an agent
// process that crashes mid-turn, prints garbage on stdout, or never
// answers initialize ends its turn with a session.error naming the
// command (and its exit status, its stderr, the garbage) within the
// configured timeout; the session takes the next message.
func TestACPAgentFailures(t *testing.T) {
	three := 3
	w := startACPSlack(t, "T0ACPF", scripted(t, acpagent.Script{}))
	// Only the silent agent waits out the start's bound, on a gateway of
	// its own: the others start however busy the machine is.
	silent := startACPSlack(t, "T0ACPS", scripted(t, acpagent.Script{}), "SWITCHBOARD_ACP_INIT_SECONDS", "2")
	for i, tc := range []struct {
		name   string
		script acpagent.Script
		want   []string
	}{
		{"crash", acpagent.Script{Turns: []acpagent.Turn{
			{Match: "again", Steps: []acpagent.Step{{Say: "Fine this time."}}},
			{Match: "go", Steps: []acpagent.Step{toolDone("Starting"), {Exit: &three}}},
		}}, []string{`"scripted-acp"`, "exited during the turn", "status 3"}},
		{"garbage", acpagent.Script{Garbage: "Welcome to Agent v2! Type /help"}, []string{`"scripted-acp"`, "Welcome to Agent v2! Type /help", "status 2"}},
		{"silent", acpagent.Script{NeverInitialize: true}, []string{`"scripted-acp"`, "did not answer initialize within 2s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := w
			if tc.script.NeverInitialize {
				w = silent
			}
			if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"runtime": scripted(t, tc.script)}); code != 200 {
				t.Fatalf("the agent: %d %s", code, raw)
			}
			channel := "C0FAIL" + string(rune('A'+i))
			m, id := mentionACP(t, w, channel, "go")
			st, evs := w.srv.waitFor(id, "the turn's end", func(st sessionState, evs []event) bool { return count(evs, "turn.completed") == 1 })
			var msg string
			for _, e := range evs {
				if e.Type == "session.error" {
					var b struct{ Message string }
					mustJSON(t, e.Body, &b)
					msg = b.Message
				}
			}
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q does not say %q (session %+v)", msg, want, st)
				}
			}
			w.waitReply(w.team, channel, m.TS, "I ran into an error")
			if tc.name != "crash" {
				return
			}
			reply := w.fake.Human(w.team.ID, channel, "U0ALICE", "try again", m.TS)
			if code, _ := w.event(fakeslack.MessageEvent(reply, "channel")); code != 200 {
				t.Fatalf("reply: %d", code)
			}
			w.waitReply(w.team, channel, m.TS, "Fine this time.")
		})
	}
}

// TestACPFilesAndTerminals: the agent's file and terminal requests act
// on the session's sandbox, inside the workspace only: a path outside it,
// or a symlink that leads out, is refused; a terminal runs a command
// there and reports its output and exit status.
func TestACPFilesAndTerminals(t *testing.T) {
	w := startACPSlack(t, "T0ACPT", scripted(t, acpagent.Script{Turns: []acpagent.Turn{{Match: "files", Steps: []acpagent.Step{
		{Write: &acpagent.File{Path: "/workspace/notes/todo.txt", Content: "ship it"}},
		{Read: "/workspace/notes/todo.txt"},
		{Terminal: []string{"sh", "-c", "cat notes/todo.txt; echo; ln -s /etc /workspace/escape; exit 3"}},
		{Read: "/etc/hostname"},
		{Read: "/workspace/escape/hostname"},
		{Write: &acpagent.File{Path: "/workspace/escape/evil", Content: "x"}},
		{Say: " done"},
	}}}}))
	m, id := mentionACP(t, w, "C0FILES", "files please")
	answer := w.waitReply(w.team, "C0FILES", m.TS, "done")
	w.srv.waitIdle(id)
	for _, want := range []string{
		"wrote /workspace/notes/todo.txt",
		"read: ship it",
		"terminal exit 3: ship it",
		"read failed: ", "/etc/hostname is outside /workspace",
		"/workspace/escape/hostname is outside /workspace (it resolves to /etc/hostname)",
		"write failed: ", "/workspace/escape/evil is outside /workspace",
	} {
		if !strings.Contains(answer.Text, want) {
			t.Fatalf("the agent's account lacks %q:\n%s", want, answer.Text)
		}
	}
}

// TestACPToolsOverStdio: an agent that takes MCP servers over stdio only
// gets the gateway's platform tools through the relay put in its
// sandbox, run with Node: its Slack tool reaches the thread.
func TestACPToolsOverStdio(t *testing.T) {
	image := sandboximage.ForTestNodeWith(t, acpPrograms)
	w := startACPSlack(t, "T0ACPR", scripted(t, acpagent.Script{StdioMCPOnly: true, Turns: []acpagent.Turn{{Match: "relay", Steps: []acpagent.Step{
		{MCP: &acpagent.MCPCall{Tool: "slack_post_message", Args: map[string]any{"text": "Posted through the stdio relay."}}},
		{Say: "Relayed."},
	}}}}), "SWITCHBOARD_SANDBOX_IMAGE", image, "SWITCHBOARD_EGRESS", "on")
	m, id := mentionACP(t, w, "C0RELAY", "relay please")
	answer := w.waitReply(w.team, "C0RELAY", m.TS, "Relayed.")
	w.srv.waitIdle(id)
	if !strings.Contains(answer.Text, "mcp ok:") {
		t.Fatalf("the agent's account: %q", answer.Text)
	}
	if n := len(w.botReplies(w.team, "C0RELAY", m.TS, "Posted through the stdio relay.")); n != 1 {
		t.Fatalf("%d posts of the tool in the thread", n)
	}
}
