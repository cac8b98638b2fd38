package main_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestEditorExampleClient is the editor's acceptance 1: the ACP SDK's
// own example client, built from the module at the version go.mod names,
// drives 'switchboard acp' against a real serve: a new session, a prompt,
// the streamed answer, the turn ending with end_turn.
func TestEditorExampleClient(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ms.Push(modelserver.Step{Text: "Hello from the gateway, editor."})

	client := filepath.Join(t.TempDir(), "acp-example-client")
	build := exec.Command("go", "build", "-o", client, "github.com/coder/acp-go-sdk/example/client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the SDK's example client: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, serveBinary(t), "acp", "--agent", "default", "--url", srv.url, "--token", adminToken)
	cmd.Env = childEnviron()
	cmd.Dir = t.TempDir()
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("example client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"Connected to agent", "Created session: ses_", "Hello from the gateway, editor.", "Agent completed"} {
		if !strings.Contains(out, want) {
			t.Fatalf("example client output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "stop_reason=end_turn") {
		t.Fatalf("the prompt did not end with end_turn:\n%s", stderr.String())
	}
	_, id, _ := strings.Cut(out, "Created session: ")
	id, _, _ = strings.Cut(id, "\n")
	_, evs := srv.waitIdle(strings.TrimSpace(id))
	checkLog(t, evs)
	if n := count(evs, "turn.completed"); n != 1 {
		t.Fatalf("%d turns: %v", n, types(evs))
	}
}

// TestEditorSlackSession is the editor's acceptances 2 and 3: a session a
// Slack mention started is loaded in the editor (its log replayed), a
// reply in the thread streams to the editor, a prompt from the editor
// continues it, and the answer shows in the
// editor and once in the thread; a confirmation answered in the editor
// lets the tool run, and one clicked in Slack first makes the editor's
// later answer a no-op it is told of.
func TestEditorSlackSession(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0ED1", Name: "Acme"}, map[string]string{"SWITCHBOARD_WEB_FETCH": "on", "SWITCHBOARD_WEB_FETCH_POLICY": "always_ask"})
	w.ms.Push(modelserver.Step{Text: "The plan: ship on Monday."})
	m := w.fake.Human(w.team.ID, "C0GENERAL", "U0ALICE", "<@"+w.team.BotUserID+"> plan the launch", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("app_mention: %d", code)
	}
	id := w.session(w.team.ID, m.Channel, m.TS)
	w.waitReply(w.team, m.Channel, m.TS, "ship on Monday")
	w.srv.waitIdle(id)

	// The editor holds an attach token naming the person, not the admin
	// token.
	token, _ := attachToken(t, w.srv, id, "Ada Lovelace")
	ed := startEditor(t, "--url", w.srv.url, "--token", token)
	if _, err := ed.conn.LoadSession(ed.ctx(), acp.LoadSessionRequest{SessionId: acp.SessionId(id), Cwd: t.TempDir(), McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("load: %v", err)
	}
	// The replay is sent before session/load answers.
	if got := ed.text("user"); !strings.Contains(got, "plan the launch") {
		t.Fatalf("replayed user text %q", got)
	}
	if got := ed.text("agent"); !strings.Contains(got, "The plan: ship on Monday.") {
		t.Fatalf("replayed agent text %q", got)
	}
	list, err := ed.conn.ListSessions(ed.ctx(), acp.ListSessionsRequest{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var title string
	for _, s := range list.Sessions {
		if string(s.SessionId) == id && s.Title != nil {
			title = *s.Title
		}
	}
	if !strings.HasPrefix(title, "Slack ") || !strings.Contains(title, m.Channel) {
		t.Fatalf("the session in the list: %q (%+v)", title, list.Sessions)
	}

	// A reply in the thread while the editor follows streams to the
	// editor, with the reply.
	w.ms.Push(modelserver.Step{Text: "Tuesday works too."})
	reply := w.fake.Human(w.team.ID, m.Channel, "U0BOB", "what about Tuesday?", m.TS)
	if code, _ := w.event(fakeslack.MessageEvent(reply, "channel")); code != 200 {
		t.Fatalf("reply: %d", code)
	}
	ed.waitText("user", "what about Tuesday?")
	ed.waitText("agent", "Tuesday works too.")
	w.srv.waitIdle(id)

	// A prompt from the editor continues the thread's session.
	w.ms.Push(modelserver.Step{Text: "Monday it is, as the editor asked."})
	stop, err := ed.prompt(acp.SessionId(id), "make it Monday for sure")
	if err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	if got := ed.text("agent"); !strings.Contains(got, "Monday it is, as the editor asked.") {
		t.Fatalf("streamed answer %q", got)
	}
	if strings.Contains(ed.text("user"), "make it Monday") {
		t.Fatalf("the editor's own prompt was echoed back: %q", ed.text("user"))
	}
	w.waitReply(w.team, m.Channel, m.TS, "Monday it is")
	w.srv.waitIdle(id)
	if n := len(w.botReplies(w.team, m.Channel, m.TS, "Monday it is")); n != 1 {
		t.Fatalf("the editor's answer posted %d times in the thread", n)
	}
	if !modelSaw(w.ms, "make it Monday for sure") {
		t.Fatal("the model did not see the editor's prompt")
	}
	if n := len(w.botReplies(w.team, m.Channel, m.TS, "Ada Lovelace continued this session from their editor")); n != 1 {
		t.Fatalf("the thread was told %d times that Ada continued from her editor", n)
	}

	// A confirmation answered in the editor.
	page := map[string]any{"url": w.srv.url + "/healthz"}
	w.ms.Push(call("toolu_ed1", "web_fetch", page), modelserver.Step{Text: "Fetched it."})
	done := ed.promptAsync(acp.SessionId(id), "fetch the health page")
	ask := ed.ask()
	if ask.req.ToolCall.ToolCallId != "toolu_ed1" {
		t.Fatalf("permission request %+v", ask.req)
	}
	ask.answer(acp.PermissionOptionKindAllowOnce)
	if r := ed.waitPrompt(done); r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt after the editor's allow: %+v", r)
	}
	ed.waitText("agent", "Fetched it.")
	_, evs := w.srv.waitIdle(id)
	if got := answersOf(t, evs, "toolu_ed1"); len(got) != 1 || got[0] != "allow" {
		t.Fatalf("confirmations of toolu_ed1: %v", got)
	}
	result(t, evs, "toolu_ed1")
	started, completed := ed.toolCalls()
	if !slices.Contains(started, "toolu_ed1") || !slices.Contains(completed, "toolu_ed1") {
		t.Fatalf("tool calls in the editor: started %v completed %v", started, completed)
	}

	// The same question clicked in Slack first.
	asksBefore := len(w.botReplies(w.team, m.Channel, m.TS, "Allow this?"))
	w.ms.Push(call("toolu_ed2", "web_fetch", page), modelserver.Step{Text: "Understood, not fetched."})
	done = ed.promptAsync(acp.SessionId(id), "fetch it once more")
	ask = ed.ask()
	var inThread []fakeslack.Message
	w.fake.WaitFor(t, patience, "the question in the thread", func() bool {
		inThread = w.botReplies(w.team, m.Channel, m.TS, "Allow this?")
		return len(inThread) > asksBefore
	})
	if code := w.click(w.team, "U0ALICE", inThread[len(inThread)-1], "sb_deny"); code != 200 {
		t.Fatalf("Deny in Slack: %d", code)
	}
	if r := ed.waitPrompt(done); r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt after the thread's deny: %+v", r)
	}
	// The editor's request is withdrawn, and the editor told how the
	// thread answered it.
	ed.waitText("tool", "toolu_ed2: Answered elsewhere: deny.")
	if ask.req.ToolCall.ToolCallId != "toolu_ed2" {
		t.Fatalf("permission request %+v", ask.req)
	}
	_, evs = w.srv.waitIdle(id)
	if got := answersOf(t, evs, "toolu_ed2"); len(got) != 1 || got[0] != "deny" {
		t.Fatalf("confirmations of toolu_ed2: %v", got)
	}
	checkLog(t, evs)
}

// TestEditorCancel is the editor's acceptance 4 (cancel): session/cancel
// stops a running turn, the prompt answers cancelled, and the session
// takes the next prompt. A new session records the editor's working
// directory and says the editor's MCP servers stay behind.
func TestEditorCancel(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ed := startEditor(t, "--url", srv.url, "--token", adminToken, "--agent", "default")
	cwd := t.TempDir()
	ns, err := ed.conn.NewSession(ed.ctx(), acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{{Stdio: &acp.McpServerStdio{Name: "local", Command: "true", Args: []string{}, Env: []acp.EnvVariable{}}}}})
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	id := string(ns.SessionId)
	code, raw := srv.do("GET", "/v1/sessions/"+id, nil)
	if code != 200 || !strings.Contains(string(raw), `"cwd":"`+cwd+`"`) {
		t.Fatalf("session: %d %s", code, raw)
	}

	ms.Push(modelserver.Step{Text: "Thinking about it", Hang: true})
	n := len(ms.Requests())
	done := ed.promptAsync(ns.SessionId, "think it over")
	srv.waitFor(id, "the turn running", func(_ sessionState, evs []event) bool { return count(evs, "turn.started") == 1 })
	// Cancelled before its model call, the turn would leave the hanging
	// step to the next prompt's.
	waitRequests(t, ms, n+1)
	start := time.Now()
	if err := ed.conn.Cancel(ed.ctx(), acp.CancelNotification{SessionId: ns.SessionId}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	r := ed.waitPrompt(done)
	t.Logf("session/cancel to the prompt's answer: %v", time.Since(start))
	if r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("cancelled prompt: %+v", r)
	}
	if got := ed.text("agent"); !strings.Contains(got, "MCP server(s) are not forwarded") {
		t.Fatalf("no word of the MCP servers: %q", got)
	}

	ms.Push(modelserver.Step{Text: "Back at it."})
	if stop, err := ed.prompt(ns.SessionId, "go on"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt after cancel: %v %v", stop, err)
	}
	ed.waitText("agent", "Back at it.")
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
}

// TestEditorMaxTurns: a prompt past the session's max_turns ends with
// max_turn_requests and a message saying how to raise the cap; raising it
// runs the paused turn, which the open editor shows.
func TestEditorMaxTurns(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ed := startEditor(t, "--url", srv.url, "--token", adminToken)
	ns, err := ed.conn.NewSession(ed.ctx(), acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	id := string(ns.SessionId)
	if code, raw := srv.do("POST", "/v1/sessions/"+id, map[string]any{"limits": map[string]any{"max_turns": 1}}); code != 200 {
		t.Fatalf("limits: %d %s", code, raw)
	}
	ms.Push(modelserver.Step{Text: "One turn done."})
	if stop, err := ed.prompt(ns.SessionId, "first"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("first prompt: %v %v", stop, err)
	}
	ms.Push(modelserver.Step{Text: "The second answer, after the raise."})
	stop, err := ed.prompt(ns.SessionId, "second")
	if err != nil || stop != acp.StopReasonMaxTurnRequests {
		t.Fatalf("prompt past max_turns: %v %v", stop, err)
	}
	ed.waitText("agent", "switchboard session limits "+id+" --max-turns N")
	if code, raw := srv.do("POST", "/v1/sessions/"+id, map[string]any{"limits": map[string]any{"max_turns": 5}}); code != 200 {
		t.Fatalf("raise: %d %s", code, raw)
	}
	ed.waitText("agent", "The second answer, after the raise.")
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
}

// TestEditorAttachTokenRevoked is the editor's acceptance 4 (revoke): an
// attach token revoked while the editor follows its session ends the
// editor's access with a clear error, and the next prompt says why.
func TestEditorAttachTokenRevoked(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ms.Push(modelserver.Step{Text: "First answer."})
	id := srv.startSession("default", "hello")
	srv.waitIdle(id)
	token, tokenID := attachToken(t, srv, id, "Grace Hopper")
	ed := startEditor(t, "--url", srv.url, "--token", token)
	if _, err := ed.conn.LoadSession(ed.ctx(), acp.LoadSessionRequest{SessionId: acp.SessionId(id), Cwd: "/", McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("load: %v", err)
	}
	if code, raw := srv.do("DELETE", "/v1/sessions/"+id+"/attach_tokens/"+tokenID, nil); code != 200 {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	ed.waitText("agent", "This editor lost the session")
	if got := ed.text("agent"); !strings.Contains(got, "was revoked") {
		t.Fatalf("the editor was not told why: %q", got)
	}
	_, err := ed.prompt(acp.SessionId(id), "are you there?")
	if msg := rpcMessage(t, err); !strings.Contains(msg, "was revoked") {
		t.Fatalf("prompt after the revoke: %q", msg)
	}
	for _, e := range srv.events(id) {
		if e.Type == "user.message" && strings.Contains(string(e.Body), "are you there") {
			t.Fatalf("a revoked token's message reached the log: %s", e.Body)
		}
	}
}

// attachToken mints an attach token of the session for person.
func attachToken(t *testing.T, srv *server, id, person string) (token, tokenID string) {
	t.Helper()
	code, raw := srv.do("POST", "/v1/sessions/"+id+"/attach_tokens", map[string]any{"person": person})
	if code != 201 {
		t.Fatalf("attach token: %d %s", code, raw)
	}
	var out struct{ ID, Token string }
	mustJSON(t, raw, &out)
	return out.Token, out.ID
}

// TestEditorErrors is the editor's acceptance 5: a gateway that is down,
// a bad token, an unknown session, a prompt the API cannot take are
// JSON-RPC errors with a clear message, and stdout holds nothing but
// JSON-RPC frames (each editor's cleanup parses all of it).
func TestEditorErrors(t *testing.T) {
	_, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	newReq := acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}}

	t.Run("bad token", func(t *testing.T) {
		ed := startEditor(t, "--url", srv.url, "--token", "not-the-token")
		_, err := ed.conn.NewSession(ed.ctx(), newReq)
		if msg := rpcMessage(t, err); !strings.Contains(msg, "the gateway refused the token") {
			t.Fatalf("new session: %q", msg)
		}
		_, err = ed.conn.ListSessions(ed.ctx(), acp.ListSessionsRequest{})
		if msg := rpcMessage(t, err); !strings.Contains(msg, "the gateway refused the token") {
			t.Fatalf("list: %q", msg)
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		ed := startEditor(t, "--url", srv.url, "--token", adminToken)
		_, err := ed.conn.LoadSession(ed.ctx(), acp.LoadSessionRequest{SessionId: "ses_nosuchsession", Cwd: "/", McpServers: []acp.McpServer{}})
		if msg := rpcMessage(t, err); !strings.Contains(msg, "load session ses_nosuchsession") || err.(*acp.RequestError).Code != -32002 {
			t.Fatalf("load: %v", err)
		}
		_, err = ed.prompt("ses_nosuchsession", "hello")
		if msg := rpcMessage(t, err); !strings.Contains(msg, "not open in this editor") {
			t.Fatalf("prompt: %q", msg)
		}
		ns, err := ed.conn.NewSession(ed.ctx(), newReq)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ed.conn.Prompt(ed.ctx(), acp.PromptRequest{SessionId: ns.SessionId, Prompt: []acp.ContentBlock{acp.ImageBlock("aGk=", "image/png")}})
		if msg := rpcMessage(t, err); !strings.Contains(msg, "text prompts only") {
			t.Fatalf("image prompt: %q", msg)
		}
	})
	t.Run("gateway down", func(t *testing.T) {
		down := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
		url := down.url
		down.kill()
		ed := startEditor(t, "--url", url, "--token", adminToken)
		_, err := ed.conn.NewSession(ed.ctx(), newReq)
		if msg := rpcMessage(t, err); !strings.Contains(msg, "cannot reach the gateway at "+url) {
			t.Fatalf("new session: %q", msg)
		}
		_, err = ed.conn.LoadSession(ed.ctx(), acp.LoadSessionRequest{SessionId: "ses_x", Cwd: "/", McpServers: []acp.McpServer{}})
		if msg := rpcMessage(t, err); !strings.Contains(msg, "cannot reach the gateway") {
			t.Fatalf("load: %q", msg)
		}
	})
	t.Run("no token file", func(t *testing.T) {
		cmd := exec.Command(serveBinary(t), "acp", "--url", srv.url)
		cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+t.TempDir())
		cmd.Stdin = strings.NewReader("")
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "no token") || stdout.String() != "" {
			t.Fatalf("acp without a token: %v stdout %q stderr %q", err, stdout.String(), stderr.String())
		}
	})
}

// answersOf lists the answers the log holds for one call.
func answersOf(t *testing.T, evs []event, toolUseID string) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type != "user.tool_confirmation" {
			continue
		}
		var b struct {
			ToolUseID string `json:"tool_use_id"`
			Result    string `json:"result"`
		}
		mustJSON(t, e.Body, &b)
		if b.ToolUseID == toolUseID {
			out = append(out, b.Result)
		}
	}
	return out
}
