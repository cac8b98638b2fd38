package harness_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// logStep is one change to a session as the context cache sees it: an
// event logged, or the cycle's lease or agent changing.
type logStep struct {
	name  string
	event *core.Event
	cycle func(cs *harness.Contexts, c *harness.Cycle)
}

// apply makes the step's change: the cycle's, or its event logged after
// log (the log it returns).
func (st logStep) apply(cs *harness.Contexts, c *harness.Cycle, log []core.Event) []core.Event {
	if st.cycle != nil {
		st.cycle(cs, c)
	}
	if st.event != nil {
		e := *st.event
		e.Seq = uint64(len(log) + 1)
		log = append(log, e)
	}
	return log
}

func ev(name, typ string, level core.Level, actor core.Actor, body any) logStep {
	e := core.NewEvent(typ, level, actor, body)
	return logStep{name: name, event: &e}
}

func userMsg(name string, b core.MessageBody) logStep {
	return ev(name, core.TypeUserMessage, core.LevelUser, core.ActorHuman, b)
}

// contextScript covers every event Derive reads, in the orders a turn
// logs them, and what invalidates a kept context.
func contextScript() []logStep {
	return []logStep{
		userMsg("first message", core.MessageBody{Text: "hello"}),
		ev("running", core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		ev("turn started", core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		ev("progress", core.TypeAgentMessage, core.LevelProgress, core.ActorAgent, core.MessageBody{Text: "looking"}),
		ev("tool use", core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "c1", Name: "read", Input: []byte(`{}`)}),
		ev("second tool use", core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "c2", Name: "read", Input: []byte(`{"a":1}`)}),
		ev("tool result", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "c1", Output: "one"}),
		userMsg("steering", core.MessageBody{Text: "also check the tests"}),
		ev("tool result after text", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "c2", Output: "two", IsError: true}),
		ev("answer", core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "done"}),
		ev("budget note", core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: "over", Kind: core.MessageKindBudget}),
		ev("turn completed", core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
		ev("instructions", core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: " be brief ", Kind: core.MessageKindInstructions}),
		ev("stale answer", core.TypeUserCustomToolResult, core.LevelInternal, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c9", Output: "late"}),
		ev("custom tool use", core.TypeAgentCustomToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "c3", Name: "deploy", Input: []byte(`{}`)}),
		ev("confirmation", core.TypeUserToolConfirmation, core.LevelInternal, core.ActorHuman, core.ToolConfirmationBody{ToolUseID: "c3", Result: "allow"}),
		ev("custom result", core.TypeUserCustomToolResult, core.LevelInternal, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c3", Output: "deployed"}),
		ev("custom result twice", core.TypeUserCustomToolResult, core.LevelInternal, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c3", Output: "again"}),
		ev("second turn", core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		ev("error", core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "overloaded"}),
		ev("failed", core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonError}),
		ev("retry", core.TypeUserRetry, core.LevelInternal, core.ActorHuman, struct{}{}),
		{name: "lease moves", cycle: func(_ *harness.Contexts, c *harness.Cycle) { c.Epoch++ }},
		userMsg("after the move", core.MessageBody{Text: "still there?"}),
		{name: "lease granted here again", cycle: func(cs *harness.Contexts, c *harness.Cycle) {
			cs.Carry(c.SessionID, c.Epoch, c.Epoch+1)
			c.Epoch++
		}},
		ev("sandbox reset", core.TypeSandboxReset, core.LevelInternal, core.ActorSystem, core.SandboxResetBody{Reason: "moved"}),
		ev("interrupt", core.TypeUserInterrupt, core.LevelInternal, core.ActorHuman, struct{}{}),
		userMsg("attachment", core.MessageBody{Text: "see file", Attachments: []core.Attachment{{Name: "a.txt", Size: 3}}}),
		ev("attachment fetched", core.TypeAttachmentsFetched, core.LevelInternal, core.ActorSystem,
			core.AttachmentsFetchedBody{Seq: 27, Attachments: []core.Attachment{{ID: "f1", Name: "a.txt", Size: 3}}}),
		{name: "agent edited", cycle: func(_ *harness.Contexts, c *harness.Cycle) {
			a := *c.Agent
			a.Version++
			a.System = "You are terse."
			c.Agent = &a
		}},
		ev("answer after edit", core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "read it"}),
		ev("compacted", core.TypeCompacted, core.LevelInternal, core.ActorSystem, core.CompactedBody{Summary: "all of the above"}),
		ev("answer to a call before the compaction", core.TypeUserCustomToolResult, core.LevelInternal, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c3", Output: "x"}),
		userMsg("after compaction", core.MessageBody{Text: "go on"}),
		ev("tool use after compaction", core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "c4", Name: "read", Input: []byte(`{}`)}),
		ev("tool result after compaction", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "c4", Output: "four"}),
		ev("more instructions", core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: "cite files", Kind: core.MessageKindInstructions}),
		ev("last answer", core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "all good"}),
	}
}

// TestContextsDeriveAsFull builds logs event by event and checks, after
// each event, that the kept context equals a full derivation: for the
// session, and for forks of it taken at every point that go on with the
// rest of the script.
func TestContextsDeriveAsFull(t *testing.T) {
	script := contextScript()
	for fork := 0; fork <= len(script); fork++ {
		t.Run(fmt.Sprintf("fork after %d", fork), func(t *testing.T) {
			cs := harness.NewContexts(4)
			c := &harness.Cycle{SessionID: "sesn_a", Epoch: 1, Agent: &core.Agent{ID: "agt_1", Version: 1, System: "You help."}}
			var log []core.Event
			for i, st := range script {
				if i == fork {
					// The fork keeps the log so far under a new id, and the
					// original goes on beside it.
					forked := *c
					forked.SessionID = "sesn_fork"
					checkDerive(t, cs, &forked, log, "fork")
					checkDerive(t, cs, c, log, "original at the fork")
					c = &forked
				}
				log = st.apply(cs, c, log)
				checkDerive(t, cs, c, log, st.name)
				// A step that reads the same log again changes nothing.
				checkDerive(t, cs, c, log, st.name+" again")
			}
		})
	}
}

func checkDerive(t *testing.T, cs *harness.Contexts, c *harness.Cycle, log []core.Event, step string) {
	t.Helper()
	log = slices.Clip(log)
	want, err := harness.Derive(c.Agent.System, log)
	if err != nil {
		t.Fatalf("%s: full derive: %v", step, err)
	}
	got, err := cs.Derive(c, log)
	if err != nil {
		t.Fatalf("%s: kept derive: %v", step, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: kept context differs from the full one\n got: %+v\nwant: %+v", step, got, want)
	}
}

// TestContextsReuse: a kept context is carried on from, not derived
// again, unless the lease moved or the agent changed. The events it
// covers are made unreadable before the second derivation, so only a
// full one fails.
func TestContextsReuse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(cs *harness.Contexts, c *harness.Cycle)
		reused bool
	}{
		{"same lease", func(*harness.Contexts, *harness.Cycle) {}, true},
		{"next grant here", func(cs *harness.Contexts, c *harness.Cycle) { cs.Carry(c.SessionID, c.Epoch, c.Epoch+1); c.Epoch++ }, true},
		{"lease moved", func(_ *harness.Contexts, c *harness.Cycle) { c.Epoch++ }, false},
		{"grant after another holder's", func(cs *harness.Contexts, c *harness.Cycle) {
			cs.Carry(c.SessionID, c.Epoch+1, c.Epoch+2)
			c.Epoch += 2
		}, false},
		{"agent edited", func(_ *harness.Contexts, c *harness.Cycle) { a := *c.Agent; a.Version++; c.Agent = &a }, false},
		{"another session", func(_ *harness.Contexts, c *harness.Cycle) { c.SessionID = "sesn_b" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := harness.NewContexts(4)
			c := &harness.Cycle{SessionID: "sesn_a", Epoch: 3, Agent: &core.Agent{ID: "agt_1", Version: 1}}
			log := []core.Event{{Seq: 1, Type: core.TypeUserMessage, Actor: core.ActorHuman, Body: []byte(`{"text":"hi"}`)}}
			if _, err := cs.Derive(c, log); err != nil {
				t.Fatal(err)
			}
			tc.change(cs, c)
			log[0].Body = []byte(`not json`)
			log = append(log, core.Event{Seq: 2, Type: core.TypeAgentMessage, Level: core.LevelUser, Actor: core.ActorAgent, Body: []byte(`{"text":"hello"}`)})
			mc, err := cs.Derive(c, log)
			if reused := err == nil; reused != tc.reused {
				t.Fatalf("reused = %v (err %v), want %v", reused, err, tc.reused)
			}
			if tc.reused && len(mc.Messages) != 2 {
				t.Fatalf("got %d messages, want the kept one and the new one", len(mc.Messages))
			}
		})
	}
}

// TestContextsBounded: sessions touched once do not pile up.
func TestContextsBounded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max, want int
	}{
		{"capped", 3, 3},
		{"off", 0, 0},
		{"room to spare", 1000, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := harness.NewContexts(tc.max)
			log := []core.Event{{Seq: 1, Type: core.TypeUserMessage, Body: []byte(`{"text":"hi"}`)}}
			for i := range 100 {
				c := &harness.Cycle{SessionID: fmt.Sprintf("sesn_%d", i), Agent: &core.Agent{ID: "agt_1", Version: 1}}
				if _, err := cs.Derive(c, log); err != nil {
					t.Fatal(err)
				}
			}
			if got := cs.Len(); got != tc.want {
				t.Fatalf("kept %d sessions, want %d", got, tc.want)
			}
		})
	}
}

// TestContextsBoundedBySize: contexts few in number but large are
// dropped by their size, the most recent kept; one larger than the
// whole bound is not kept at all.
func TestContextsBoundedBySize(t *testing.T) {
	// Each context is a message of 10,000 bytes and a little more: four
	// fit in 50,000 bytes, five do not.
	text := strings.Repeat("x", 10_000)
	derive := func(cs *harness.Contexts, id, text string) {
		t.Helper()
		body, err := json.Marshal(core.MessageBody{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		log := []core.Event{{Seq: 1, Type: core.TypeUserMessage, Body: body}}
		c := &harness.Cycle{SessionID: id, Agent: &core.Agent{ID: "agt_1", Version: 1}}
		if _, err := cs.Derive(c, log); err != nil {
			t.Fatal(err)
		}
	}
	cs := harness.NewContexts(1000).LimitBytes(50_000)
	for i := range 100 {
		derive(cs, fmt.Sprintf("sesn_%d", i), text)
	}
	if got := cs.Len(); got != 4 {
		t.Fatalf("kept %d contexts of 10,000 bytes within 50,000, want 4", got)
	}
	cs = harness.NewContexts(1000).LimitBytes(50_000)
	derive(cs, "sesn_big", strings.Repeat(text, 6))
	if got := cs.Len(); got != 0 {
		t.Fatalf("kept %d contexts over the bound, want none", got)
	}
}

// deepCopy is msgs with nothing shared: blocks, their bytes and
// attachments copied.
func deepCopy(msgs []core.Message) []core.Message {
	out := make([]core.Message, len(msgs))
	for i, m := range msgs {
		out[i] = core.Message{Role: m.Role, Content: make([]core.Block, len(m.Content))}
		for j, b := range m.Content {
			b.Input, b.Data = slices.Clone(b.Input), slices.Clone(b.Data)
			if b.Attachment != nil {
				a := *b.Attachment
				b.Attachment = &a
			}
			out[i].Content[j] = b
		}
	}
	return out
}

// TestHandedOutMessagesStayAsTheyWere: the kept context never changes a
// message it handed out in place, whatever it adds after (a tool result
// that goes before the steering text of the last message, a compaction, a
// lease moving): a request naming its conversation promises so
// (core.ModelRequest.Conversation), and a model client takes a message
// with the same blocks as the one it encoded.
func TestHandedOutMessagesStayAsTheyWere(t *testing.T) {
	cs := harness.NewContexts(4)
	c := &harness.Cycle{SessionID: "sesn_a", Epoch: 1, Agent: &core.Agent{ID: "agt_1", Version: 1, System: "You help."}}
	var log []core.Event
	type handedOut struct {
		step       string
		msgs, then []core.Message
	}
	var all []handedOut
	// Three calls answered around steering: the last message grows to
	// three blocks in an array of four, and the third result goes before
	// its text, where an array with room would be written in place.
	script := []logStep{
		userMsg("hello", core.MessageBody{Text: "hello"}),
		ev("turn started", core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		script = append(script, ev("use "+id, core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: "read", Input: []byte(`{}`)}))
	}
	script = append(script,
		ev("result t1", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "t1", Output: "one"}),
		ev("result t2", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "t2", Output: "two"}),
		userMsg("steering", core.MessageBody{Text: "and the docs"}),
		ev("result t3", core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: "t3", Output: "three"}),
		ev("turn completed", core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
	)
	for _, st := range append(contextScript(), script...) {
		log = st.apply(cs, c, log)
		mc, err := cs.Derive(c, slices.Clip(log))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		all = append(all, handedOut{st.name, slices.Clone(mc.Messages), deepCopy(mc.Messages)})
	}
	for _, h := range all {
		if !reflect.DeepEqual(h.msgs, h.then) {
			t.Fatalf("the context handed out at %q changed since:\n now %+v\nthen %+v", h.step, h.msgs, h.then)
		}
	}
}
