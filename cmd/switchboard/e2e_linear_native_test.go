package main_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// Linear's native surfaces: confirmations and budget pauses as
// elicitations answered by the next prompt, plans on the agent session,
// the repository of an issue chosen by Linear's suggestions.

// startACPLinear is a Linear world whose default agent runs the scripted
// ACP agent on script, in Docker sandboxes of the ACP test image.
func startACPLinear(t *testing.T, script acpagent.Script) *linearWorld {
	t.Helper()
	w := startLinear(t, map[string]string{"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_MEMORY_MB": "256",
		"SWITCHBOARD_SANDBOX_IMAGE": acpImage(t)})
	deploymentOf(t, w.srv.dataDir)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"runtime": scripted(t, script)}); code != 200 {
		t.Fatalf("make the default agent an ACP agent: %d %s", code, raw)
	}
	return w
}

// elicitation waits for the agent session's elicitation holding substr.
func (w *linearWorld) elicitation(as, substr string) fakelinear.Activity {
	w.t.Helper()
	var found fakelinear.Activity
	w.fake.WaitFor(w.t, patience, "an elicitation with "+substr, func() bool {
		for _, a := range w.fake.Activities() {
			if a.SessionID == as && a.Type == "elicitation" && strings.Contains(a.Body, substr) {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// options are a select elicitation's options as "label=value".
func options(t *testing.T, a fakelinear.Activity) []string {
	t.Helper()
	if a.Signal != "select" {
		t.Fatalf("elicitation %q has signal %q, want select", a.Body, a.Signal)
	}
	var out []string
	for _, o := range a.SignalMetadata["options"].([]any) {
		m := o.(map[string]any)
		out = append(out, m["label"].(string)+"="+m["value"].(string))
	}
	return out
}

// promptBy is a prompted event on agent session as, written by user.
func (w *linearWorld) promptBy(as, user, text string) []byte {
	return w.fake.PromptedEvent(fakelinear.SessionEvent{SessionID: as, Issue: w.issue, Prompt: text, CreatorID: user})
}

// confirmations are the log's user.tool_confirmation bodies.
func confirmations(t *testing.T, evs []event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type == "user.tool_confirmation" {
			var b struct {
				ToolUseID, Result, Message string
			}
			mustJSON(t, e.Body, &b)
			out = append(out, b.Result+" "+b.Message)
		}
	}
	return out
}

// TestLinearConfirmationAnsweredByPrompt is acceptance 4's confirmation
// with the built-in loop: an ask-first MCP tool's call is an elicitation
// naming the tool and its arguments, with Allow and Deny; a guest's
// "allow" is refused in place and logs nothing; a member's "Allow" is
// the confirmation (who gave it logged), the tool runs, and the answer
// is the response; the same prompt delivered again queues nothing.
func TestLinearConfirmationAnsweredByPrompt(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	w := startLinear(t, nil)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}}}); code != 200 {
		t.Fatalf("give the agent an ask-first tool: %d %s", code, raw)
	}
	guest := w.fake.SeedUser(fakelinear.User{Name: "Gus Guest", Email: "gus@example.com", Guest: true})
	w.ms.Push(call("toolu_echo", "mcp_docs_echo", map[string]any{"text": "hello from Linear"}), modelserver.Step{Text: "Echoed it."})
	as := w.created("as-confirm")
	id := w.session(as)
	ask := w.elicitation(as, "Allow this?")
	if !strings.Contains(ask.Body, "`mcp_docs_echo`") || !strings.Contains(ask.Body, `"text":"hello from Linear"`) {
		t.Fatalf("the question does not name the tool and its arguments: %q", ask.Body)
	}
	if got := options(t, ask); !slices.Equal(got, []string{"Allow=allow", "Deny=deny"}) {
		t.Fatalf("options %q", got)
	}
	if countHolding(w.activities(as), "outside Linear") != 0 {
		t.Fatalf("activities still send the person outside Linear: %q", w.activities(as))
	}
	w.srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})

	if code, _ := w.deliver(w.promptBy(as, guest.ID, "allow"), ""); code != 200 {
		t.Fatalf("the guest's prompt: %d", code)
	}
	w.elicitation(as, "Only members of this workspace can allow or deny")
	if st, evs := w.srv.session(id), w.srv.events(id); st.Status != "awaiting_input" || len(confirmations(t, evs)) != 0 || count(evs, "user.message") != 1 {
		t.Fatalf("after a guest's allow: %+v, log %v", st, types(evs))
	}

	// Other text is an aside: queued and read, while the question stays
	// open (the turn ends waiting again, the model is not asked).
	if code, _ := w.deliver(w.promptBy(as, w.fake.HumanUserID, "what does it change?"), ""); code != 200 {
		t.Fatalf("the member's question: %d", code)
	}
	w.srv.waitFor(id, "the aside taken, the call still waiting", func(st sessionState, evs []event) bool {
		return count(evs, "user.message") == 2 && count(evs, "turn.completed") == 2 && st.Status == "awaiting_input"
	})
	if n := len(w.ms.Requests()); n != 1 || len(confirmations(t, w.srv.events(id))) != 0 {
		t.Fatalf("after the aside: %d model requests, log %v", n, types(w.srv.events(id)))
	}

	allow := w.promptBy(as, w.fake.HumanUserID, "Allow")
	if code, _ := w.deliver(allow, ""); code != 200 {
		t.Fatalf("the member's prompt: %d", code)
	}
	w.waitActivity(as, "response: Echoed it.", patience)
	if !modelSaw(w.ms, "what does it change?") {
		t.Fatal("the model never read the aside")
	}
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	if got, want := confirmations(t, evs), []string{"allow by Linear user Ada Lovelace (" + w.fake.HumanUserID + ")"}; !slices.Equal(got, want) {
		t.Fatalf("confirmations %q, want %q", got, want)
	}
	if r := results(t, evs)["toolu_echo"]; r.IsError || !strings.Contains(r.Output, "hello from Linear") {
		t.Fatalf("the allowed call: %+v", r)
	}
	if n := count(evs, "user.message"); n != 2 {
		t.Fatalf("the answer was queued as a message too: %v", types(evs))
	}
	w.waitActivity(as, "thought: Allowed by Ada Lovelace. Going on…", patience)
	if code, _ := w.deliver(allow, ""); code != 200 {
		t.Fatalf("the prompt again: %d", code)
	}
	if got := confirmations(t, w.srv.events(id)); len(got) != 1 {
		t.Fatalf("a replayed answer queued another: %q", got)
	}
}

// TestLinearACPConfirmationStaysOpenAndPlan is acceptance 4 with an ACP
// agent: its plan reaches the agent session (agentSessionUpdate) with
// every entry's status, first as planned, then as done; its permission
// request is an elicitation; a question written meanwhile is queued and
// acknowledged with the question, which stays open (the turn still
// waits, nothing is confirmed); "allow" then resumes the tool, and the
// question is answered in a turn of its own.
func TestLinearACPConfirmationStaysOpenAndPlan(t *testing.T) {
	w := startACPLinear(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "what does it change", Steps: []acpagent.Step{{Say: "It rewrites config.json."}}},
		{Steps: []acpagent.Step{
			{Plan: []acpagent.PlanEntry{{Content: "Read the issue", Status: "in_progress", Priority: "high"}, {Content: "Fix the config", Status: "pending", Priority: "medium"}}},
			{Permission: &acpagent.Tool{ID: "call_cfg", Title: "Modifying config.json", Kind: "edit"}},
			{Plan: []acpagent.PlanEntry{{Content: "Read the issue", Status: "completed", Priority: "high"}, {Content: "Fix the config", Status: "completed", Priority: "medium"}}},
			{Say: "Config fixed."},
		}},
	}})
	as := w.created("as-acp-confirm")
	id := w.session(as)
	ask := w.elicitation(as, "Modifying config.json")
	if !strings.Contains(ask.Body, "the question stays open") || len(options(t, ask)) != 2 {
		t.Fatalf("the question %q", ask.Body)
	}
	w.srv.waitFor(id, "the turn waiting inside itself", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})

	w.prompted(as, "what does it change?", "")
	w.elicitation(as, "I will read it once the question above is answered")
	// The question is queued (the session says so), the turn still waits.
	_, raw := w.srv.do("GET", "/v1/sessions/"+id, nil)
	evs := w.srv.events(id)
	if !strings.Contains(string(raw), `"pending_action":{"tool_use_ids":["`) || len(confirmations(t, evs)) != 0 || count(evs, "turn.completed") != 0 {
		t.Fatalf("after a question the confirmation is not open: %s, log %v", raw, types(evs))
	}

	// The runtime notes that the question waits; Linear keeps showing
	// the open question rather than a thought.
	w.srv.waitFor(id, "the runtime's note", func(_ sessionState, evs []event) bool {
		for _, e := range evs {
			if e.Type == "agent.message" && strings.Contains(string(e.Body), `"kind":"note"`) {
				return true
			}
		}
		return false
	})

	w.prompted(as, "allow", "")
	w.waitActivity(as, "response: Config fixed.", patience)
	w.waitActivity(as, "response: It rewrites config.json.", patience)
	_, evs = w.srv.waitIdle(id)
	if n := countHolding(w.activities(as), "when I finish"); n != 0 {
		t.Fatalf("a thought while the question was open: %q", w.activities(as))
	}
	if got := confirmations(t, evs); len(got) != 1 || !strings.HasPrefix(got[0], "allow by Linear user Ada Lovelace") {
		t.Fatalf("confirmations %q", got)
	}
	if n := count(evs, "agent.plan"); n != 2 {
		t.Fatalf("%d plans logged, want 2: %v", n, types(evs))
	}
	sess, ok := w.fake.Session(as)
	if !ok || len(sess.Plans) != 2 {
		t.Fatalf("plans at Linear: %+v", sess)
	}
	raw, _ = json.Marshal(sess.Plans)
	want := `[[{"content":"Read the issue","status":"inProgress"},{"content":"Fix the config","status":"pending"}],` +
		`[{"content":"Read the issue","status":"completed"},{"content":"Fix the config","status":"completed"}]]`
	if string(raw) != want {
		t.Fatalf("plans at Linear\n got %s\nwant %s", raw, want)
	}
}

// TestLinearBudgetPause is acceptance 6 on Linear: a session budget's
// pause is an elicitation whose options raise the budget; a budget
// approver's prompt of one raises it and the same turn goes on.
func TestLinearBudgetPause(t *testing.T) {
	w := startLinear(t, nil)
	if code, raw := w.srv.do("POST", "/v1/agents/default", `{"limits":{"max_session_tokens":1000}}`); code != 200 {
		t.Fatalf("cap the default agent: %d %s", code, raw)
	}
	if code, raw := w.srv.do("POST", "/v1/installations/"+w.installation().ID, map[string]any{"budget_approvers": []string{w.fake.HumanUserID}}); code != 200 {
		t.Fatalf("set approvers: %d %s", code, raw)
	}
	w.ms.Push(sayCall("tu_look", "Looking into it.", 1300), modelserver.Step{Text: "Found the Monday bug."})
	as := w.created("as-budget")
	id := w.session(as)
	pause := w.elicitation(as, "I paused")
	if got := options(t, pause); !slices.Equal(got, []string{"budget 2000 tokens=budget 2000 tokens", "budget 4000 tokens=budget 4000 tokens"}) {
		t.Fatalf("options %q", got)
	}
	w.prompted(as, "budget 2000 tokens", "")
	w.waitActivity(as, "response: Found the Monday bug.", patience)
	_, evs := w.srv.waitIdle(id)
	if n := count(evs, "turn.started"); n != 1 {
		t.Fatalf("%d turns: the raise did not resume the paused one: %v", n, types(evs))
	}
}

// TestLinearRepositorySuggestion is acceptance 4's repository choice: a
// Linear session whose agent is granted two repositories asks Linear's
// issueRepositorySuggestions with both, and works on the one it ranks
// confidently (the model is told before its first turn); when Linear is
// not confident, the agent asks in the agent session with the
// repositories as options.
func TestLinearRepositorySuggestion(t *testing.T) {
	w := startCross(t)
	ghIns, linIns := w.installation("github"), w.installation("linear")
	w.group("acme", ghIns, linIns)
	if code := w.gh.deliver("installation", "", installationPayload("created", installationID, "acme/widgets", "acme/gadgets"), githubSecret); code != 200 {
		t.Fatalf("installation with two repositories: %d", code)
	}
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{
		"repository_access": map[string]any{"installation": ghIns, "repositories": []string{"acme/widgets", "acme/gadgets"}}}); code != 200 {
		t.Fatalf("grant both: %d %s", code, raw)
	}
	lin := w.lin.fake
	lin.SetRepositorySuggestion("acme/widgets", 0.2)

	t.Run("confident", func(t *testing.T) {
		lin.SetRepositorySuggestion("acme/gadgets", 0.93)
		w.ms.Push(modelserver.Step{Text: "Looking at the gadgets."})
		as := w.lin.created("as-repo-sure")
		w.lin.waitActivity(as, "response: Looking at the gadgets.", patience)
		reqs := w.ms.Requests()
		if system := reqs[len(reqs)-1].System; !strings.Contains(system, "This session is about the repository acme/gadgets") {
			t.Fatalf("the model was not told the repository:\n%s", system)
		}
		asks := lin.SuggestionAsks()
		if len(asks) != 1 || asks[0].AgentSessionID != as || len(asks[0].Candidates) != 2 ||
			!strings.HasSuffix(asks[0].Candidates[0], "/acme/widgets") || !strings.HasSuffix(asks[0].Candidates[1], "/acme/gadgets") {
			t.Fatalf("suggestions asked %+v", asks)
		}
		if n := countHolding(w.lin.activities(as), "Which repository"); n != 0 {
			t.Fatalf("asked although Linear was sure: %q", w.lin.activities(as))
		}
	})

	t.Run("not sure", func(t *testing.T) {
		lin.SetRepositorySuggestion("acme/gadgets", 0.3)
		w.ms.Push(modelserver.Step{Text: "Waiting for your choice."})
		as := w.lin.created("as-repo-unsure")
		ask := w.lin.elicitation(as, "Which repository is this issue about?")
		got := options(t, ask)
		if len(got) != 2 || !strings.HasPrefix(got[0], "acme/widgets=https://") || !strings.HasSuffix(got[1], "/acme/gadgets") {
			t.Fatalf("options %q", got)
		}
		w.lin.waitActivity(as, "response: Waiting for your choice.", patience)
		reqs := w.ms.Requests()
		if system := reqs[len(reqs)-1].System; !strings.Contains(system, "the people were asked to choose") {
			t.Fatalf("the model was not told the choice is open:\n%s", system)
		}
	})
}
