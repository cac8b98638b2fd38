package linear

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// wait ends the turn waiting for the calls ids (requires_action), as the
// built-in loop does with an ask-first or custom tool.
func (tw *turnWriter) wait(ids ...string) {
	tw.append(false, core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem,
		core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction, PendingToolUseIDs: ids}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem,
			core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction}))
}

// park makes the turn wait inside itself for a person's answer to id, as
// an ACP agent's permission request does.
func (tw *turnWriter) park(id string) {
	tw.append(false, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{
		Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction, PendingAction: &core.PendingAction{ToolUseIDs: []string{id}}}))
}

// kinds are the activities of a kind, as the fake has them.
func (f *fakePlatform) ofKind(kind string) []activity {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []activity
	for _, a := range f.activities {
		if a.kind() == kind {
			out = append(out, a)
		}
	}
	return out
}

// TestSinkAsksAboutAWaitingCall is acceptance 4's question: a call that
// waits for a person is an elicitation naming the tool and its arguments,
// with Allow and Deny as its options, asked once however the wait shows
// in the log; a custom tool's wait says nobody in Linear answers it.
func TestSinkAsksAboutAWaitingCall(t *testing.T) {
	tests := []struct {
		name   string
		write  func(tw *turnWriter)
		body   []string
		sel    bool
		answer string // the turn's answer after the question, if any
	}{
		{"built-in turn ended waiting", func(tw *turnWriter) {
			tw.append(false, toolUse("tu_1", "bash", `{"command":"rm -rf build"}`))
			tw.wait("tu_1")
		}, []string{"**Allow this?**", "`bash`", `"command":"rm -rf build"`, "Reply **allow** or **deny**", "the question stays open"}, true, ""},
		{"ACP turn waiting inside itself", func(tw *turnWriter) {
			tw.append(false, toolUse("tu_2", "Modifying config.json", `{"kind":"edit"}`))
			tw.park("tu_2")
			tw.append(false, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
				toolResult("tu_2", "edited"), answerEv("Config updated."))
			tw.end(core.ReasonCompleted)
		}, []string{"`Modifying config.json`", "the question stays open"}, true, "response: Config updated."},
		{"ACP turn that ends without a word after the answer", func(tw *turnWriter) {
			tw.append(false, toolUse("tu_4", "Running tests", `{"kind":"execute"}`))
			tw.park("tu_4")
			tw.append(false, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
				toolResult("tu_4", "ok"))
			tw.end(core.ReasonCompleted)
		}, []string{"`Running tests`"}, true, "response: Done."},
		{"ACP wait that expired", func(tw *turnWriter) {
			tw.append(false, toolUse("tu_3", "Deleting cache", `{"kind":"delete"}`))
			tw.park("tu_3")
			tw.wait("tu_3")
		}, []string{"`Deleting cache`"}, true, ""},
		{"custom tool", func(tw *turnWriter) {
			tw.append(false, core.NewEvent(core.TypeAgentCustomToolUse, core.LevelProgress, core.ActorAgent,
				core.ToolUseBody{ToolUseID: "tu_c", Name: "deploy", Input: []byte(`{"env":"prod"}`)}))
			tw.wait("tu_c")
		}, []string{"Waiting for the application to return the result of `deploy`"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.startSink()
			s := r.start("as-ask")
			tc.write(r.turn(s.ID))
			waitUntil(t, "the sink to let go", func() bool {
				return r.sink.Settled(t.Context()) && len(r.fake.ofKind("elicitation")) > 0 &&
					(tc.answer == "" || slices.Contains(r.fake.shown(), tc.answer))
			})
			els := r.fake.ofKind("elicitation")
			if len(els) != 1 {
				t.Fatalf("%d elicitations, want 1: %q", len(els), r.fake.shown())
			}
			body, _ := els[0].Content["body"].(string)
			for _, want := range tc.body {
				if !strings.Contains(body, want) {
					t.Errorf("elicitation %q lacks %q", body, want)
				}
			}
			if strings.Contains(body, "outside Linear") {
				t.Errorf("elicitation %q still says to act outside Linear", body)
			}
			if got := len(els[0].Select) > 0; got != tc.sel {
				t.Fatalf("select options %+v, want them: %v", els[0].Select, tc.sel)
			}
			if tc.sel && !slices.Equal(els[0].Select, []option{{Label: "Allow", Value: "allow"}, {Label: "Deny", Value: "deny"}}) {
				t.Fatalf("options %+v", els[0].Select)
			}
		})
	}
}

// TestPromptAnswersAConfirmation is acceptance 4's answer: while a call
// waits, "allow" or "deny" (or an option's label) from a member of the
// workspace is a user.tool_confirmation saying who gave it, never a
// message; a guest or an app is told in place why not, and nothing is
// queued; other text is an ordinary message, and while the turn waits
// inside itself it is acknowledged with the question, which stays open;
// a replayed answer queues nothing.
func TestPromptAnswersAConfirmation(t *testing.T) {
	r := newRig(t)
	r.fake.users = map[string]person{
		"user-2":  {ID: "user-2", Name: "Ada", Active: true},
		"guest-1": {ID: "guest-1", Name: "Gus", Active: true, Guest: true},
		"bot-1":   {ID: "bot-1", Name: "Other agent", Active: true, App: true},
	}
	by := func(user string, m map[string]any) map[string]any {
		m["agentActivity"].(map[string]any)["userId"] = user
		return m
	}
	deliver := func(m map[string]any) {
		t.Helper()
		if code := r.deliver(m); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
	}
	// A session whose turn waits inside itself, and one whose turn ended
	// waiting (the built-in loop).
	deliver(created("as-in"))
	in := r.sessionOf("as-in")
	tw := r.turn(in.ID)
	tw.append(false, toolUse("tu_1", "Modifying config.json", `{"kind":"edit"}`))
	tw.park("tu_1")
	deliver(created("as-end"))
	ended := r.sessionOf("as-end")
	tw = r.turn(ended.ID)
	tw.append(false, toolUse("tu_2", "bash", `{"command":"make deploy"}`))
	tw.wait("tu_2")
	deliver(created("as-none"))
	none := r.sessionOf("as-none")

	type queued struct{ typ, text string }
	inputs := func(id string) []queued {
		t.Helper()
		var out []queued
		for _, e := range r.pending(id) {
			switch e.Type {
			case core.TypeUserToolConfirmation:
				var b core.ToolConfirmationBody
				if err := e.Decode(&b); err != nil {
					t.Fatal(err)
				}
				out = append(out, queued{e.Type, b.ToolUseID + " " + b.Result + " " + b.Message})
			case core.TypeUserMessage:
				var b inputBody
				if err := e.Decode(&b); err != nil {
					t.Fatal(err)
				}
				w := ""
				if b.Linear != nil && b.Linear.Waiting {
					w = " (waiting)"
					if b.Kind != core.MessageKindAside {
						t.Fatalf("a message beside an open question is of kind %q", b.Kind)
					}
				}
				out = append(out, queued{e.Type, b.Text + w})
			}
		}
		return out
	}
	told := func() []string {
		t.Helper()
		if err := r.p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		return r.fake.shown()
	}

	steps := []struct {
		name    string
		prompt  map[string]any
		session *core.Session
		want    []queued // the session's queued inputs after the step
		told    string   // an activity told in place, if any
	}{
		{"a question while the turn waits", by("user-2", prompted("as-in", "what does it change?", "")), in,
			[]queued{{core.TypeUserMessage, "what does it change? (waiting)"}}, ""},
		{"a guest's allow", by("guest-1", prompted("as-in", "Allow", "")), in,
			[]queued{{core.TypeUserMessage, "what does it change? (waiting)"}}, "elicitation: Only members of this workspace can allow or deny"},
		{"another agent's allow", by("bot-1", prompted("as-in", "allow!", "")), in,
			[]queued{{core.TypeUserMessage, "what does it change? (waiting)"}}, "elicitation: Only members of this workspace can allow or deny"},
		{"a member's allow", by("user-2", prompted("as-in", " allow. ", "")), in,
			[]queued{{core.TypeUserMessage, "what does it change? (waiting)"}, {core.TypeUserToolConfirmation, "tu_1 allow by Linear user Ada (user-2)"}},
			"thought: Allowed by Ada. Going on…"},
		{"the same allow again", by("user-2", prompted("as-in", " allow. ", "")), in,
			[]queued{{core.TypeUserMessage, "what does it change? (waiting)"}, {core.TypeUserToolConfirmation, "tu_1 allow by Linear user Ada (user-2)"}}, ""},
		{"a member's deny after the turn ended", by("user-2", prompted("as-end", "DENY", "")), ended,
			[]queued{{core.TypeUserToolConfirmation, "tu_2 deny by Linear user Ada (user-2)"}}, "thought: Denied by Ada."},
		{"a message after the turn ended waiting", by("user-2", prompted("as-end", "use staging", "")), ended,
			[]queued{{core.TypeUserToolConfirmation, "tu_2 deny by Linear user Ada (user-2)"}, {core.TypeUserMessage, "use staging (waiting)"}}, ""},
		{"allow when nothing waits", by("user-2", prompted("as-none", "allow", "")), none,
			[]queued{{core.TypeUserMessage, "allow"}}, ""},
	}
	for _, st := range steps {
		before := len(told())
		deliver(st.prompt)
		// The created input of the sessions not taken by a turn is first.
		got := inputs(st.session.ID)
		if st.session == none {
			got = got[1:]
		}
		if !slices.Equal(got, st.want) {
			t.Fatalf("%s: inputs %q, want %q", st.name, got, st.want)
		}
		after := told()[before:]
		switch {
		case st.told == "" && len(after) > 0:
			t.Fatalf("%s: told %q", st.name, after)
		case st.told != "" && (len(after) != 1 || !strings.HasPrefix(after[0], st.told)):
			t.Fatalf("%s: told %q, want %q", st.name, after, st.told)
		}
	}
	// Who people are is looked up once for a while: Ada answered twice.
	r.fake.mu.Lock()
	defer r.fake.mu.Unlock()
	if r.fake.userCalls != 3 {
		t.Fatalf("%d user look-ups, want one per person", r.fake.userCalls)
	}
}

// TestSinkAcknowledgesAMessageBehindAnOpenQuestion: a message that waits
// behind a confirmation is acknowledged with the question again, so the
// agent session keeps awaiting the answer.
func TestSinkAcknowledgesAMessageBehindAnOpenQuestion(t *testing.T) {
	r := newRig(t)
	r.fake.users = map[string]person{"user-2": {ID: "user-2", Name: "Ada", Active: true}}
	r.startSink()
	s := r.start("as-ack")
	tw := r.turn(s.ID)
	tw.append(false, toolUse("tu_1", "Modifying config.json", `{"kind":"edit"}`))
	tw.park("tu_1")
	waitUntil(t, "the question", func() bool { return len(r.fake.ofKind("elicitation")) == 1 })
	if code := r.deliver(prompted("as-ack", "why?", "")); code != 200 {
		t.Fatalf("prompted: %d", code)
	}
	waitUntil(t, "the acknowledgement", func() bool { return len(r.fake.ofKind("elicitation")) == 2 })
	a := r.fake.ofKind("elicitation")[1]
	if body, _ := a.Content["body"].(string); body != waitingAck || len(a.Select) != 2 {
		t.Fatalf("acknowledgement %+v", a)
	}
	// The runtime's note that the message waits says nothing more while
	// the question is open; once answered, notes show again.
	note := func(text string) core.Event {
		return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: text, Kind: core.MessageKindNote})
	}
	tw.append(false, note("📝 Got it: I will read your message when I finish."))
	tw.append(false, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		toolResult("tu_1", "edited"), note("📝 Another note."), answerEv("Config updated."))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the response", func() bool {
		return r.sink.Settled(t.Context()) && slices.Contains(r.fake.shown(), "response: Config updated.")
	})
	got := strings.Join(r.fake.shown(), "\n")
	if strings.Contains(got, "I will read your message when I finish") || !strings.Contains(got, "thought: 📝 Another note.") {
		t.Fatalf("activities %q", r.fake.shown())
	}
}
