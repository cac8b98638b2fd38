package editor

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// TestStopReasons holds every reason a turn yields or pauses with to a
// stop reason of its own choosing, so a new reason cannot slip through
// as end_turn unnoticed.
func TestStopReasons(t *testing.T) {
	want := map[core.Reason]acp.StopReason{
		core.ReasonCompleted:        acp.StopReasonEndTurn,
		core.ReasonNeedsInput:       acp.StopReasonEndTurn,
		core.ReasonRequiresAction:   acp.StopReasonEndTurn,
		core.ReasonCanceled:         acp.StopReasonCancelled,
		core.ReasonDeadlineExceeded: acp.StopReasonMaxTurnRequests,
		core.ReasonBudgetExceeded:   acp.StopReasonMaxTokens,
		core.ReasonMaxSteps:         acp.StopReasonMaxTurnRequests,
		core.ReasonMaxTurns:         acp.StopReasonMaxTurnRequests,
		core.ReasonError:            acp.StopReasonEndTurn,
	}
	if len(stopReasons) != len(want) {
		t.Fatalf("the table maps %d reasons, want %d", len(stopReasons), len(want))
	}
	for r, s := range want {
		t.Run(string(r), func(t *testing.T) {
			if got := stopReason(r); got != s {
				t.Fatalf("stop reason %q, want %q", got, s)
			}
		})
	}
	for _, tc := range []struct {
		reason core.Reason
		pause  *core.BudgetPause
		want   string
	}{
		{core.ReasonMaxTurns, &core.BudgetPause{Name: "max_turns", Limit: 3, Spent: 3}, "--max-turns N"},
		{core.ReasonBudgetExceeded, &core.BudgetPause{Name: "max_session_tokens", Limit: 100, Spent: 120}, "--max-session-tokens N"},
		{core.ReasonBudgetExceeded, &core.BudgetPause{Name: "max_session_cost_usd", Limit: 1, Spent: 1.2}, "--max-session-cost-usd N"},
		{core.ReasonMaxSteps, nil, "--max-steps N"},
		{core.ReasonDeadlineExceeded, nil, "--turn-seconds N"},
		{core.ReasonBudgetExceeded, nil, "--max-tokens N"},
	} {
		if got := stopNote("ses_1", tc.reason, tc.pause); !strings.Contains(got, "switchboard session limits ses_1 "+tc.want) {
			t.Errorf("note for %s %+v: %q", tc.reason, tc.pause, got)
		}
	}
	if got := stopNote("ses_1", core.ReasonCompleted, nil); got != "" {
		t.Errorf("a completed turn gets a note: %q", got)
	}
}

// TestTranslate checks what the editor is shown of the log: streamed
// text is not shown twice, the plan tool shows as its plan, internal
// context and the editor's own prompt are left out.
func TestTranslate(t *testing.T) {
	s := newSession(&agent{ctx: context.Background()}, "ses_1")
	s.posted["evt_mine"] = true
	ev := func(id, typ string, level core.Level, body any) core.Event {
		raw, _ := json.Marshal(body)
		return core.Event{ID: id, Type: typ, Level: level, Actor: core.ActorHuman, Body: raw}
	}
	steps := []struct {
		e    core.Event
		live bool
		want []string
	}{
		{ev("e1", core.TypeUserMessage, core.LevelInternal, core.MessageBody{Text: "thread context"}), true, nil},
		{ev("evt_mine", core.TypeUserMessage, core.LevelUser, core.MessageBody{Text: "from the editor"}), true, nil},
		{ev("e2", core.TypeUserMessage, core.LevelUser, core.MessageBody{Text: "from the thread"}), true, []string{"user:from the thread"}},
		{ev("e3", core.TypeAgentMessageDelta, core.LevelProgress, core.MessageDeltaBody{Response: "r1", Text: "Hel"}), true, []string{"agent:Hel"}},
		{ev("e4", core.TypeAgentMessageDelta, core.LevelProgress, core.MessageDeltaBody{Response: "r1", Text: "lo"}), true, []string{"agent:lo"}},
		{ev("e5", core.TypeAgentMessage, core.LevelUser, core.MessageBody{Text: "Hello there."}), true, []string{"agent: there."}},
		{ev("e6", core.TypeAgentMessage, core.LevelUser, core.MessageBody{Text: "Again."}), false, []string{"agent:\n\nAgain."}},
		{ev("e7", core.TypeAgentMessageDelta, core.LevelProgress, core.MessageDeltaBody{Response: "r2", Text: "ignored"}), false, nil},
		{ev("e8", core.TypeAgentToolUse, core.LevelProgress, core.ToolUseBody{ToolUseID: "t1", Name: core.PlanTool, Input: json.RawMessage(`{}`)}), true, nil},
		{ev("e9", core.TypeAgentToolResult, core.LevelProgress, core.ToolResultBody{ToolUseID: "t1", Output: "ok"}), true, nil},
		{ev("e10", core.TypeAgentPlan, core.LevelProgress, core.PlanBody{Entries: []core.PlanEntry{{Content: "ship", Status: "pending", Priority: "high"}}}), true, []string{"plan:ship"}},
		{ev("e11", core.TypeAgentToolUse, core.LevelProgress, core.ToolUseBody{ToolUseID: "t2", Name: "bash", Input: json.RawMessage(`{"cmd":"ls"}`)}), true, []string{"tool_call:t2 bash in_progress"}},
		{ev("e12", core.TypeAgentToolResult, core.LevelProgress, core.ToolResultBody{ToolUseID: "t2", Output: "boom", IsError: true}), true, []string{"tool_call_update:t2 failed"}},
		{ev("e13", core.TypeAgentMessage, core.LevelProgress, core.MessageBody{Text: "hmm", Kind: core.MessageKindThought}), true, []string{"thought:hmm"}},
	}
	for _, st := range steps {
		var got []string
		for _, u := range s.translate(st.e, st.live) {
			got = append(got, describe(u))
		}
		if strings.Join(got, "|") != strings.Join(st.want, "|") {
			t.Errorf("%s %s: %q, want %q", st.e.ID, st.e.Type, got, st.want)
		}
	}
}

// TestTranslateFinalText: a response's agent.message shows only what its
// streamed deltas lack, though the engines trim it and the editor may
// have joined in the middle of the stream.
func TestTranslateFinalText(t *testing.T) {
	for name, tc := range map[string]struct {
		deltas []string
		final  string
		want   string
	}{
		"same":                 {[]string{"Hel", "lo."}, "Hello.", ""},
		"more":                 {[]string{"Hel", "lo"}, "Hello there.", " there."},
		"leading whitespace":   {[]string{"\n\n", "Hello."}, "Hello.", ""},
		"trailing whitespace":  {[]string{"Hello.", "\n"}, "Hello.", ""},
		"both and more":        {[]string{"\n Hello", " \n"}, "Hello world.", " world."},
		"joined in the middle": {[]string{"world."}, "Hello, world.", ""},
		"whitespace only":      {[]string{"\n"}, "Hello.", "\n\nHello."},
		"unrelated":            {[]string{"Draft"}, "Final.", "\n\nFinal."},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSession(&agent{ctx: context.Background()}, "ses_1")
			s.text.open = true // after an earlier message: a new one gets its blank line
			for _, d := range tc.deltas {
				raw, _ := json.Marshal(core.MessageDeltaBody{Response: "r1", Text: d})
				s.translate(core.Event{Type: core.TypeAgentMessageDelta, Level: core.LevelProgress, Body: raw}, true)
			}
			raw, _ := json.Marshal(core.MessageBody{Text: tc.final})
			var got string
			for _, u := range s.translate(core.Event{Type: core.TypeAgentMessage, Level: core.LevelUser, Body: raw}, true) {
				got += strings.TrimPrefix(describe(u), "agent:")
			}
			if got != tc.want {
				t.Fatalf("sent %q after the deltas %q; want %q", got, tc.deltas, tc.want)
			}
		})
	}
}

func describe(u acp.SessionUpdate) string {
	switch {
	case u.UserMessageChunk != nil:
		return "user:" + u.UserMessageChunk.Content.Text.Text
	case u.AgentMessageChunk != nil:
		return "agent:" + u.AgentMessageChunk.Content.Text.Text
	case u.AgentThoughtChunk != nil:
		return "thought:" + u.AgentThoughtChunk.Content.Text.Text
	case u.Plan != nil:
		return "plan:" + u.Plan.Entries[0].Content
	case u.ToolCall != nil:
		return "tool_call:" + string(u.ToolCall.ToolCallId) + " " + u.ToolCall.Title + " " + string(u.ToolCall.Status)
	case u.ToolCallUpdate != nil:
		return "tool_call_update:" + string(u.ToolCallUpdate.ToolCallId) + " " + string(*u.ToolCallUpdate.Status)
	}
	return "?"
}

// TestPromptText keeps text and links and refuses what a user.message
// cannot hold.
func TestPromptText(t *testing.T) {
	got, err := promptText([]acp.ContentBlock{acp.TextBlock("look at"), acp.ResourceLinkBlock("main.go", "file:///src/main.go")})
	if err != nil || got != "look at\n\n[main.go](file:///src/main.go)" {
		t.Fatalf("text %q, %v", got, err)
	}
	for name, blocks := range map[string][]acp.ContentBlock{
		"image": {acp.ImageBlock("aGk=", "image/png")},
		"empty": {acp.TextBlock("  ")},
	} {
		if _, err := promptText(blocks); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// queuingGateway queues every input without logging it, as a gateway
// whose session is busy with another turn does, and tells when it has.
type queuingGateway struct {
	Gateway
	sent chan struct{}
}

func (g *queuingGateway) GetSession(context.Context, string) (*client.SessionView, error) {
	return &client.SessionView{}, nil
}

func (g *queuingGateway) SendEvents(context.Context, string, []client.Input, string) ([]client.QueuedInput, error) {
	g.sent <- struct{}{}
	return []client.QueuedInput{{ID: "evt_queued"}}, nil
}

// TestPromptEndsWithSession: a prompt whose message is still queued
// answers cancelled when its session ends (session/close, another
// session/load of the id) rather than waiting for a turn no one follows.
func TestPromptEndsWithSession(t *testing.T) {
	g := &queuingGateway{sent: make(chan struct{}, 1)}
	s := newSession(&agent{ctx: context.Background(), o: Options{Gateway: g, Log: slog.New(slog.DiscardHandler), CancelWait: time.Hour}}, "ses_1")
	type answer struct {
		stop acp.StopReason
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		stop, err := s.prompt(context.Background(), "go on", "")
		done <- answer{stop, err}
	}()
	<-g.sent
	s.stop()
	select {
	case a := <-done:
		if a.err != nil || a.stop != acp.StopReasonCancelled {
			t.Fatalf("the prompt answered %q, %v; want cancelled", a.stop, a.err)
		}
	case <-time.After(30 * time.Second): // a fail-safe ceiling, not a measure
		t.Fatal("the prompt still waits 30 s after its session ended")
	}
}

// TestSettleBudgetWhileQueued: while the editor's message is queued,
// another turn pausing on a budget or max_turns ends the prompt with that
// stop reason and how to raise it: the message waits for the raise.
func TestSettleBudgetWhileQueued(t *testing.T) {
	for name, tc := range map[string]struct {
		reason core.Reason
		pause  core.BudgetPause
		want   acp.StopReason
	}{
		"max_turns":   {core.ReasonMaxTurns, core.BudgetPause{Name: core.BudgetTurns, Limit: 3, Spent: 3}, acp.StopReasonMaxTurnRequests},
		"cost budget": {core.ReasonBudgetExceeded, core.BudgetPause{Name: "max_session_cost_usd", Limit: 1, Spent: 1.2}, acp.StopReasonMaxTokens},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSession(&agent{ctx: context.Background()}, "ses_1")
			w := &waiter{text: "go on", inputID: "evt_queued", done: make(chan outcome, 1)}
			s.turn = w
			raw, _ := json.Marshal(core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: tc.reason, PendingAction: &core.PendingAction{Budget: &tc.pause}})
			got, out := s.settle(core.Event{Seq: 9, Type: core.TypeStatusChanged, Body: raw})
			if got != w || out.stop != tc.want || !strings.Contains(out.note, "raise it") {
				t.Fatalf("settle: %v %+v; want the prompt ended with %q and how to raise the budget", got != nil, out, tc.want)
			}
		})
	}
}

// recordingGateway records the inputs sent.
type recordingGateway struct {
	Gateway
	mu   sync.Mutex
	sent []string
}

func (g *recordingGateway) SendEvents(_ context.Context, _ string, in []client.Input, _ string) ([]client.QueuedInput, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, i := range in {
		g.sent = append(g.sent, i.Type)
	}
	return nil, nil
}

func (g *recordingGateway) inputs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sent)
}

// TestCancelQueued: session/cancel while the editor's message is queued
// behind another turn leaves that turn alone, and interrupts the turn
// that takes the message, once it is logged.
func TestCancelQueued(t *testing.T) {
	g := &recordingGateway{}
	s := newSession(&agent{ctx: context.Background(), o: Options{Gateway: g, Log: slog.New(slog.DiscardHandler)}}, "ses_1")
	s.posted["evt_mine"] = true
	s.turn = &waiter{text: "go on", inputID: "evt_mine", done: make(chan outcome, 1)}
	s.cancel()
	if got := g.inputs(); len(got) != 0 {
		t.Fatalf("cancel with the message queued sent %v: it interrupts someone else's turn", got)
	}
	raw, _ := json.Marshal(core.MessageBody{Text: "go on"})
	s.handle(core.Event{ID: "evt_other", Seq: 4, Type: core.TypeUserMessage, Level: core.LevelInternal, Actor: core.ActorHuman, Body: raw}, true)
	if got := g.inputs(); len(got) != 0 {
		t.Fatalf("another message's logging sent %v", got)
	}
	s.handle(core.Event{ID: "evt_mine", Seq: 5, Type: core.TypeUserMessage, Level: core.LevelUser, Actor: core.ActorHuman, Body: raw}, true)
	if got := g.inputs(); !slices.Equal(got, []string{core.TypeUserInterrupt}) {
		t.Fatalf("once the message was logged the editor sent %v; want one interrupt", got)
	}
	// Running now: a cancel interrupts at once.
	s.cancel()
	if got := g.inputs(); len(got) != 2 {
		t.Fatalf("cancel of a running turn sent %v", got)
	}
}

// waitingEditor holds every permission request open until it is
// withdrawn, and records the updates it is sent.
type waitingEditor struct {
	asked, withdrawn chan string
	mu               sync.Mutex
	updates          []string
}

func (p *waitingEditor) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := n.Update
	if u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0 {
		p.updates = append(p.updates, string(u.ToolCallUpdate.ToolCallId)+" "+u.ToolCallUpdate.Content[0].Content.Content.Text.Text)
	}
	return nil
}

func (p *waitingEditor) RequestPermission(ctx context.Context, r acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	p.asked <- string(r.ToolCall.ToolCallId)
	<-ctx.Done()
	p.withdrawn <- string(r.ToolCall.ToolCallId)
	return acp.RequestPermissionResponse{}, ctx.Err()
}

// TestPermissionWithdrawn: a confirmation the thread answers first
// withdraws the editor's open request for it, and the editor is told how
// the call was answered.
func TestPermissionWithdrawn(t *testing.T) {
	p := &waitingEditor{asked: make(chan string, 1), withdrawn: make(chan string, 1)}
	a := &agent{ctx: context.Background(), conn: p, ready: make(chan struct{}), o: Options{Gateway: &recordingGateway{}, Log: slog.New(slog.DiscardHandler)}}
	close(a.ready)
	s := newSession(a, "ses_1")
	c := &toolCall{id: "t1", name: "bash"}
	s.tools[c.id] = c
	go s.askPermission(c)
	if id := <-p.asked; id != "t1" {
		t.Fatalf("asked about %s", id)
	}
	raw, _ := json.Marshal(core.ToolConfirmationBody{ToolUseID: "t1", Result: "allow"})
	s.handle(core.Event{ID: "evt_c", Seq: 8, Type: core.TypeUserToolConfirmation, Level: core.LevelProgress, Body: raw}, true)
	select {
	case id := <-p.withdrawn:
		if id != "t1" {
			t.Fatalf("withdrew %s", id)
		}
	case <-time.After(30 * time.Second): // a fail-safe ceiling, not a measure
		t.Fatal("the editor's request is still open 30 s after the thread answered")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.updates) != 1 || !strings.Contains(p.updates[0], "t1 Answered elsewhere: allow") {
		t.Fatalf("the editor was told %q", p.updates)
	}
}
