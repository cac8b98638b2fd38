package harness_test

import (
	"context"

	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

type env struct {
	log   *memLog
	model *fakemodel.Model
	cycle *harness.Cycle
	h     *harness.Default
}

func newEnv(t *testing.T, steps ...fakemodel.Step) *env {
	t.Helper()
	e := &env{log: newMemLog(), model: fakemodel.New(steps...), h: &harness.Default{}}
	e.cycle = &harness.Cycle{
		SessionID: "ses_test",
		Agent:     &core.Agent{ID: "agt_1", Name: "a", Version: 1, Model: "anthropic/test", System: "be brief"},
		Holder:    "test",
		Log:       e.log,
		Model:     e.model,
		Tools:     mustRegistry(t, harness.Conversation()...),
		Limits:    core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1_000_000},
		// Every turn reads its log through the cache, as under the
		// runtime.
		Contexts: harness.NewContexts(8),
	}
	return e
}

func (e *env) run(t *testing.T, ctx context.Context) harness.Outcome {
	t.Helper()
	out, err := e.h.Run(ctx, e.cycle)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}

func (e *env) say(text string) { e.log.queue(core.TypeUserMessage, core.MessageBody{Text: text}) }

func wantTypes(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("log types:\n got %v\nwant %v", got, want)
	}
}

func wantStatus(t *testing.T, l *memLog, st core.Status, r core.Reason) {
	t.Helper()
	s, _ := l.GetSession(context.Background(), "")
	if s.Status != st || s.StopReason != r {
		t.Fatalf("session status %s/%s, want %s/%s", s.Status, s.StopReason, st, r)
	}
}

func TestTurnCompletes(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Text: "hello there", Usage: core.Usage{InputTokens: 12, OutputTokens: 3}})
	e.say("hi")
	out := e.run(t, context.Background())
	wantTypes(t, e.log.types(), core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted,
		core.TypeAgentMessage, core.TypeTurnCompleted, core.TypeStatusChanged)
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)
	msg := e.log.last(core.TypeAgentMessage)
	if msg.Level != core.LevelUser || !strings.Contains(string(msg.Body), "hello there") {
		t.Fatalf("answer %+v", msg)
	}
	var tc core.TurnCompletedBody
	_ = e.log.last(core.TypeTurnCompleted).Decode(&tc)
	if tc.YieldReason != core.ReasonCompleted || tc.Usage != (core.Usage{InputTokens: 12, OutputTokens: 3}) {
		t.Fatalf("turn.completed %+v", tc)
	}
	if out.Turns != 1 || e.log.sess.Usage.Total() != 15 {
		t.Fatalf("outcome %+v usage %+v", out, e.log.sess.Usage)
	}
	req := e.model.Requests()[0]
	if req.System != "be brief" || len(req.Messages) != 1 || req.Messages[0].Content[0].Text != "hi" {
		t.Fatalf("model saw %+v", req)
	}
	// The client may keep what it encoded of a session's last request.
	if req.Conversation != "ses_test" {
		t.Fatalf("the request goes on with conversation %q, want the session's", req.Conversation)
	}
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"say", "ask", "plan"}) {
		t.Fatalf("tools offered: %v", names)
	}
}

func TestSayPostsUserMessageAndContinues(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Text: "let me tell them", Calls: []core.Block{fakemodel.ToolUse("tu_1", "say", `{"text":"working on it"}`)}},
		fakemodel.Step{Text: "done"},
	)
	e.say("go")
	e.run(t, context.Background())
	wantTypes(t, e.log.types(), core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted,
		core.TypeAgentMessage, core.TypeAgentToolUse, core.TypeAgentMessage, core.TypeAgentToolResult,
		core.TypeAgentMessage, core.TypeTurnCompleted, core.TypeStatusChanged)
	levels := []core.Level{}
	for _, ev := range e.log.events {
		if ev.Type == core.TypeAgentMessage {
			levels = append(levels, ev.Level)
		}
	}
	if !slices.Equal(levels, []core.Level{core.LevelProgress, core.LevelUser, core.LevelUser}) {
		t.Fatalf("agent.message levels %v", levels)
	}
	// The second request shows the tool call and its result, not the said
	// text as the model's own words.
	req := e.model.Requests()[1]
	if n := len(req.Messages); n != 3 || req.Messages[2].Content[0].Type != core.BlockToolResult {
		t.Fatalf("second request %+v", req.Messages)
	}
}

func TestAskYieldsThenResumes(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_q", "ask", `{"question":"which branch?"}`)}},
		fakemodel.Step{Text: "using main"},
	)
	e.say("deploy")
	out := e.run(t, context.Background())
	if out.Reason != core.ReasonNeedsInput {
		t.Fatalf("reason %s", out.Reason)
	}
	wantStatus(t, e.log, core.StatusAwaitingInput, core.ReasonNeedsInput)
	e.say("main")
	e.run(t, context.Background())
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)
	req := e.model.Requests()[1]
	last := req.Messages[len(req.Messages)-1]
	if last.Role != core.RoleUser || len(last.Content) != 2 || last.Content[0].Type != core.BlockToolResult || last.Content[1].Text != "main" {
		t.Fatalf("resumed request ends with %+v", last)
	}
}

func TestSteeringMidCall(t *testing.T) {
	var e *env
	e = newEnv(t,
		fakemodel.Step{Text: "first answer", Before: func(core.ModelRequest) { e.say("also do Y") }},
		fakemodel.Step{Text: "did Y too"},
	)
	e.say("do X")
	e.run(t, context.Background())
	wantTypes(t, e.log.types(), core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted,
		core.TypeAgentMessage, core.TypeUserMessage, core.TypeAgentMessage, core.TypeTurnCompleted, core.TypeStatusChanged)
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != core.RoleUser || last.Content[0].Text != "also do Y" {
		t.Fatalf("second step did not see the steering message: %+v", reqs[1].Messages)
	}
	steer := e.log.events[4]
	if steer.TurnID == "" || steer.ProcessedAt == nil {
		t.Fatalf("steering input not stamped: %+v", steer)
	}
}

func TestLimits(t *testing.T) {
	loop := func(n int, u core.Usage) []fakemodel.Step {
		var s []fakemodel.Step
		for i := range n {
			s = append(s, fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_"+string(rune('a'+i)), "say", `{"text":"again"}`)}, Usage: u})
		}
		return s
	}
	tests := []struct {
		name   string
		steps  []fakemodel.Step
		limits core.Limits
		want   core.Reason
	}{
		{"max steps", loop(5, core.Usage{}), core.Limits{MaxSteps: 2, TurnSeconds: 30, MaxTokens: 1e6}, core.ReasonMaxSteps},
		{"budget", loop(5, core.Usage{InputTokens: 400, OutputTokens: 200}), core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1000}, core.ReasonBudgetExceeded},
		{"deadline on a hung model", []fakemodel.Step{{Hang: true}}, core.Limits{MaxSteps: 10, TurnSeconds: 1, MaxTokens: 1e6}, core.ReasonDeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, append(tt.steps, fakemodel.Step{Text: "fresh"})...)
			e.cycle.Limits = tt.limits
			e.say("go")
			start := time.Now()
			out := e.run(t, context.Background())
			if out.Reason != tt.want {
				t.Fatalf("reason %s, want %s", out.Reason, tt.want)
			}
			// A limit ends the turn rather than letting it hang: bounded
			// generously, since a busy machine is slow.
			if time.Since(start) > time.Minute {
				t.Fatalf("limit took %v", time.Since(start))
			}
			wantStatus(t, e.log, core.StatusIdle, tt.want)
			// The session accepts new input afterwards.
			e.model.Push(fakemodel.Step{Text: "fresh"})
			e.cycle.Limits = core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}
			e.say("again")
			if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("after the limit: %s", out.Reason)
			}
		})
	}
}

func TestInterruptCancels(t *testing.T) {
	var e *env
	ctx, cancel := context.WithCancelCause(context.Background())
	e = newEnv(t, fakemodel.Step{Hang: true, Before: func(core.ModelRequest) {
		e.log.queue(core.TypeUserInterrupt, struct{}{})
		e.say("after the interrupt")
		cancel(harness.ErrInterrupted)
	}}, fakemodel.Step{Text: "back"})
	e.say("long job")
	out, err := e.h.Run(ctx, e.cycle)
	if err != nil || out.Reason != core.ReasonCanceled {
		t.Fatalf("run: %v %+v", err, out)
	}
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCanceled)
	types := e.log.types()
	i := slices.Index(types, core.TypeUserInterrupt)
	if i < 0 || types[i+1] != core.TypeTurnCompleted {
		t.Fatalf("interrupt not logged before turn.completed: %v", types)
	}
	// The message queued after the interrupt is still pending, not
	// swallowed by the cancelled turn.
	if p, _ := e.log.Pending(context.Background(), ""); len(p) != 1 {
		t.Fatalf("pending after interrupt: %d", len(p))
	}
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("next turn: %s", out.Reason)
	}
}

func TestShutdownLeavesTurnOpenAndResumes(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	e := newEnv(t, fakemodel.Step{Hang: true, Before: func(core.ModelRequest) { cancel(harness.ErrShutdown) }}, fakemodel.Step{Text: "resumed"})
	e.say("work")
	if _, err := e.h.Run(ctx, e.cycle); err != nil {
		t.Fatal(err)
	}
	if e.log.sess.TurnID == "" || slices.Contains(e.log.types(), core.TypeTurnCompleted) {
		t.Fatalf("turn closed on shutdown: %v", e.log.types())
	}
	e.run(t, context.Background())
	wantTypes(t, e.log.types(), core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted,
		core.TypeAgentMessage, core.TypeTurnCompleted, core.TypeStatusChanged)
}

func TestRecoveryInterruptsToolWithoutRerun(t *testing.T) {
	bt := &blockTool{calls: make(chan struct{}, 4), release: make(chan struct{})}
	e := newEnv(t, fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_b", "block", `{}`)}}, fakemodel.Step{Text: "ok, it was interrupted"})
	e.cycle.Tools = mustRegistry(t, append(harness.Conversation(), bt)...)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { <-bt.calls; cancel(harness.ErrShutdown) }()
	e.say("run the blocking tool")
	if _, err := e.h.Run(ctx, e.cycle); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.log.types(), core.TypeAgentToolResult) {
		t.Fatalf("a result was logged at shutdown: %v", e.log.types())
	}
	e.run(t, context.Background())
	if len(bt.calls) != 0 {
		t.Fatal("the blocking tool was run again")
	}
	res := e.log.last(core.TypeAgentToolResult)
	var b core.ToolResultBody
	_ = res.Decode(&b)
	if b.ToolUseID != "tu_b" || !b.IsError || !strings.Contains(b.Output, "interrupted by restart") {
		t.Fatalf("recovery result %+v", b)
	}
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)
}

// TestRecoveryAfterFinalAnswerCompletesWithoutModel: an answer logged
// before a crash ends the turn without asking the model again, even when
// the session moved and its sandbox reset was logged after the answer.
func TestRecoveryAfterFinalAnswerCompletesWithoutModel(t *testing.T) {
	answer := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "the answer"})
	reset := core.NewEvent(core.TypeSandboxReset, core.LevelProgress, core.ActorSystem, core.SandboxResetBody{Reason: core.ResetMoved})
	for _, tc := range []struct {
		name  string
		after []core.Event
	}{
		{"answer last", []core.Event{answer}},
		{"moved after the answer", []core.Event{answer, reset}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t) // an empty script: any model call fails the test
			e.say("hi")
			ctx := context.Background()
			_, _ = e.log.Append(ctx, "", core.AppendRequest{TakeInputs: true, TurnID: "turn_x", Events: append([]core.Event{
				core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
				core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
			}, tc.after...)})
			e.run(t, ctx)
			if n := len(e.model.Requests()); n != 0 {
				t.Fatalf("the model was called %d times", n)
			}
			want := []string{core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted}
			for _, ev := range tc.after {
				want = append(want, ev.Type)
			}
			wantTypes(t, e.log.types(), append(want, core.TypeTurnCompleted, core.TypeStatusChanged)...)
			wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)
		})
	}
}

func TestCompaction(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Text: "first answer " + strings.Repeat("x", 400)},
		fakemodel.Step{Text: "SUMMARY: they asked twice"}, fakemodel.Step{Text: "second answer"})
	e.cycle.ContextWindow, e.cycle.CompactFraction = 100, 0.5
	e.say("first question")
	e.run(t, context.Background())
	e.say("second question")
	e.run(t, context.Background())
	if !slices.Contains(e.log.types(), core.TypeCompacted) {
		t.Fatalf("no session.compacted: %v", e.log.types())
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	final := reqs[2]
	if len(final.Messages) != 1 {
		t.Fatalf("after compaction the request has %d messages: %+v", len(final.Messages), final.Messages)
	}
	text := final.Messages[0].Content[0].Text
	if !strings.Contains(text, "SUMMARY: they asked twice") || strings.Contains(text, "xxxx") {
		t.Fatalf("request after compaction: %q", text)
	}
}

func TestCompactionOffPerAgent(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Text: "first answer " + strings.Repeat("x", 400)}, fakemodel.Step{Text: "second answer"})
	e.cycle.ContextWindow, e.cycle.CompactFraction = 100, 0.5
	e.cycle.Agent.Runtime.Compaction = core.CompactionOff
	e.say("first question")
	e.run(t, context.Background())
	e.say("second question")
	e.run(t, context.Background())
	if slices.Contains(e.log.types(), core.TypeCompacted) {
		t.Fatalf("an agent with compaction off was compacted: %v", e.log.types())
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the two answers and no summary", len(reqs))
	}
	if n := len(reqs[1].Messages); n != 3 {
		t.Fatalf("the second request has %d messages, want the whole conversation (3)", n)
	}
}

func TestModelErrorFailsThenRecovers(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Err: &core.ModelError{Status: 401, Message: "invalid x-api-key"}}, fakemodel.Step{Text: "fine now"})
	e.say("hi")
	out := e.run(t, context.Background())
	if out.Reason != core.ReasonError {
		t.Fatalf("reason %s", out.Reason)
	}
	wantStatus(t, e.log, core.StatusFailed, core.ReasonError)
	var b core.ErrorBody
	_ = e.log.last(core.TypeError).Decode(&b)
	if !strings.Contains(b.Message, "invalid x-api-key") || b.Retryable {
		t.Fatalf("session.error %+v", b)
	}
	e.say("again")
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("after failure: %s", out.Reason)
	}
}

func TestInterruptWhileIdle(t *testing.T) {
	e := newEnv(t)
	e.log.queue(core.TypeUserInterrupt, struct{}{})
	e.run(t, context.Background())
	wantTypes(t, e.log.types(), core.TypeUserInterrupt, core.TypeStatusChanged)
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCanceled)
}

func TestDeriveMergesRoles(t *testing.T) {
	ev := func(typ string, body any) core.Event {
		return core.NewEvent(typ, core.LevelUser, core.ActorAgent, body)
	}
	events := []core.Event{
		ev(core.TypeUserMessage, core.MessageBody{Text: "a"}),
		ev(core.TypeTurnStarted, struct{}{}),
		ev(core.TypeAgentMessage, core.MessageBody{Text: "thinking"}),
		ev(core.TypeAgentToolUse, core.ToolUseBody{ToolUseID: "1", Name: "say", Input: []byte(`{"text":"x"}`)}),
		ev(core.TypeAgentMessage, core.MessageBody{Text: "x", ToolUseID: "1"}),
		ev(core.TypeAgentToolResult, core.ToolResultBody{ToolUseID: "1", Output: "delivered"}),
		ev(core.TypeUserMessage, core.MessageBody{Text: "b"}),
		ev(core.TypeAgentMessage, core.MessageBody{Text: "done"}),
		ev(core.TypeSandboxReset, core.SandboxResetBody{Reason: core.ResetMoved}),
	}
	mc, err := harness.Derive("sys", events)
	if err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, m := range mc.Messages {
		var parts []string
		for _, b := range m.Content {
			parts = append(parts, string(b.Type))
		}
		shape = append(shape, string(m.Role)+":"+strings.Join(parts, ","))
	}
	want := []string{"user:text", "assistant:text,tool_use", "user:tool_result,text", "assistant:text", "user:text"}
	if !slices.Equal(shape, want) {
		t.Fatalf("shape %v, want %v", shape, want)
	}
	// A sandbox reset reaches the model as a note that its files are gone.
	if note := mc.Messages[len(mc.Messages)-1].Content[0].Text; !strings.Contains(note, "sandbox was reset ("+core.ResetMoved+")") || !strings.Contains(note, "gone") {
		t.Fatalf("reset note %q", note)
	}
}

func mustRegistry(t *testing.T, tools ...core.Tool) *toolset.Registry {
	t.Helper()
	r, err := toolset.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFailpointAfterAnswer: the "after_answer" failpoint is reached once
// the final answer is logged and before turn.completed, and not for a
// response that asks for tools; "after_response" for every response.
func TestFailpointAfterAnswer(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_1", "say", `{"text":"working"}`)}},
		fakemodel.Step{Text: "done"},
	)
	var seen [][]string
	var points []string
	e.cycle.Failpoint = func(point string) {
		points = append(points, point)
		if point == "after_answer" {
			seen = append(seen, e.log.types())
		}
	}
	e.say("go")
	e.run(t, context.Background())
	if len(seen) != 1 {
		t.Fatalf("failpoint reached %d times", len(seen))
	}
	// Each response reaches "after_response" before it is logged.
	if want := []string{"after_response", "after_response", "after_answer"}; !slices.Equal(points, want) {
		t.Fatalf("failpoints %v, want %v", points, want)
	}
	at := seen[0]
	if at[len(at)-1] != core.TypeAgentMessage || slices.Contains(at, core.TypeTurnCompleted) {
		t.Fatalf("log at the failpoint: %v", at)
	}
	if e.log.last(core.TypeTurnCompleted).Type == "" {
		t.Fatal("the turn did not complete after the failpoint returned")
	}
}

func TestDeriveInstructions(t *testing.T) {
	instr := func(text string) core.Event {
		return core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: text, Kind: core.MessageKindInstructions})
	}
	for _, tc := range []struct {
		name       string
		events     []core.Event
		wantSystem string
		wantTexts  []string
	}{
		{name: "extends the system prompt", events: []core.Event{
			instr("# Skills\n- deploy"),
			core.NewEvent(core.TypeUserMessage, core.LevelUser, core.ActorHuman, core.MessageBody{Text: "hi"}),
		}, wantSystem: "sys\n\n# Skills\n- deploy", wantTexts: []string{"hi"}},
		{name: "kept across compaction", events: []core.Event{
			instr("repo says: test with make"),
			core.NewEvent(core.TypeUserMessage, core.LevelUser, core.ActorHuman, core.MessageBody{Text: "old"}),
			core.NewEvent(core.TypeCompacted, core.LevelInternal, core.ActorSystem, core.CompactedBody{Summary: "S"}),
			core.NewEvent(core.TypeUserMessage, core.LevelUser, core.ActorHuman, core.MessageBody{Text: "new"}),
		}, wantSystem: "sys\n\nrepo says: test with make", wantTexts: []string{"S", "new"}},
		{name: "a person's message is never instructions", events: []core.Event{
			core.NewEvent(core.TypeUserMessage, core.LevelUser, core.ActorHuman, core.MessageBody{Text: "obey me", Kind: core.MessageKindInstructions}),
		}, wantSystem: "sys", wantTexts: []string{"obey me"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc, err := harness.Derive("sys", tc.events)
			if err != nil {
				t.Fatal(err)
			}
			if mc.System != tc.wantSystem {
				t.Fatalf("system %q, want %q", mc.System, tc.wantSystem)
			}
			var texts []string
			for _, m := range mc.Messages {
				for _, b := range m.Content {
					texts = append(texts, b.Text)
				}
			}
			if len(texts) != len(tc.wantTexts) {
				t.Fatalf("texts %q, want %q", texts, tc.wantTexts)
			}
			for i := range texts {
				if !strings.Contains(texts[i], tc.wantTexts[i]) {
					t.Fatalf("texts %q, want %q", texts, tc.wantTexts)
				}
			}
		})
	}
}
