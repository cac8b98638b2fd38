package harness_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// echoTool counts its calls and returns a fixed output.
type echoTool struct {
	name   string
	output string
	calls  atomic.Int32
}

func (e *echoTool) Def() core.ToolDef {
	return core.ToolDef{Name: e.name, Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (e *echoTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	e.calls.Add(1)
	return core.ToolResult{Output: e.output}, nil
}

func registry(t *testing.T, add func(r *toolset.Registry)) *toolset.Registry {
	t.Helper()
	r := mustRegistry(t, harness.Conversation()...)
	add(r)
	return r
}

func lastResult(t *testing.T, l *memLog) core.ToolResultBody {
	t.Helper()
	var b core.ToolResultBody
	if err := l.last(core.TypeAgentToolResult).Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCustomToolYieldsUntilResult(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_c", "lookup_order", `{"id":7}`)}},
		fakemodel.Step{Text: "order 7 shipped"},
	)
	e.cycle.Tools = registry(t, func(r *toolset.Registry) {
		_ = r.Add(toolset.CustomTool{Spec: core.ToolSpec{Type: "custom", Name: "lookup_order"}}, core.PolicyAllow)
	})
	e.say("where is order 7?")
	if out := e.run(t, context.Background()); out.Reason != core.ReasonRequiresAction {
		t.Fatalf("reason %s", out.Reason)
	}
	wantStatus(t, e.log, core.StatusAwaitingInput, core.ReasonRequiresAction)
	var tc core.TurnCompletedBody
	_ = e.log.last(core.TypeTurnCompleted).Decode(&tc)
	if !slices.Equal(tc.PendingToolUseIDs, []string{"tu_c"}) {
		t.Fatalf("pending %v", tc.PendingToolUseIDs)
	}
	if e.log.last(core.TypeAgentCustomToolUse).ID == "" {
		t.Fatalf("no agent.custom_tool_use: %v", e.log.types())
	}
	e.log.queue(core.TypeUserCustomToolResult, core.CustomToolResultBody{ToolUseID: "tu_c", Output: "shipped yesterday"})
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("after the result: %s", out.Reason)
	}
	req := e.model.Requests()[1]
	last := req.Messages[len(req.Messages)-1]
	if last.Content[0].Type != core.BlockToolResult || last.Content[0].Output != "shipped yesterday" {
		t.Fatalf("the model did not see the custom result: %+v", last)
	}
}

// waitingForDelete runs a turn whose ask-first delete_branch call waits
// for a person's answer.
func waitingForDelete(t *testing.T) (*env, *echoTool) {
	t.Helper()
	del := &echoTool{name: "delete_branch", output: "deleted"}
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_d", "delete_branch", `{}`)}},
		fakemodel.Step{Text: "done"},
	)
	e.cycle.Tools = registry(t, func(r *toolset.Registry) { _ = r.Add(del, core.PolicyAsk) })
	e.say("clean up")
	if out := e.run(t, context.Background()); out.Reason != core.ReasonRequiresAction || del.calls.Load() != 0 {
		t.Fatalf("before confirmation: %s, %d calls", out.Reason, del.calls.Load())
	}
	return e, del
}

func TestAskFirst(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answer  func(l *memLog)
		runs    int32
		output  string
		isError bool
	}{
		{"allow", func(l *memLog) {
			l.queue(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: "tu_d", Result: "allow"})
		}, 1, "deleted", false},
		{"deny", func(l *memLog) {
			l.queue(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: "tu_d", Result: "deny", Message: "not on a Friday"})
		}, 0, "not on a Friday", true},
		{"reply instead", func(l *memLog) {
			l.queue(core.TypeUserMessage, core.MessageBody{Text: "actually, don't"})
		}, 0, "replied without allowing", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, del := waitingForDelete(t)
			tt.answer(e.log)
			if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("after the answer: %s", out.Reason)
			}
			if del.calls.Load() != tt.runs {
				t.Fatalf("tool ran %d times, want %d", del.calls.Load(), tt.runs)
			}
			res := lastResult(t, e.log)
			if res.ToolUseID != "tu_d" || res.IsError != tt.isError || !strings.Contains(res.Output, tt.output) {
				t.Fatalf("result %+v", res)
			}
			// The model's second request is well formed: the call has its
			// result before anything else.
			req := e.model.Requests()[1]
			last := req.Messages[len(req.Messages)-1]
			if last.Role != core.RoleUser || last.Content[0].Type != core.BlockToolResult {
				t.Fatalf("second request ends with %+v", last)
			}
		})
	}
}

// TestAskFirstSurvivesRestart: a call waiting for confirmation when the
// process stopped is not closed as "interrupted" by recovery.
func TestAskFirstSurvivesRestart(t *testing.T) {
	del := &echoTool{name: "delete_branch", output: "deleted"}
	e := newEnv(t, fakemodel.Step{Text: "done"})
	e.cycle.Tools = registry(t, func(r *toolset.Registry) { _ = r.Add(del, core.PolicyAsk) })
	e.say("clean up")
	ctx := context.Background()
	_, _ = e.log.Append(ctx, "", core.AppendRequest{TakeInputs: true, TurnID: "turn_x", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "tu_d", Name: "delete_branch", Input: []byte(`{}`)}),
	}})
	if out := e.run(t, ctx); out.Reason != core.ReasonRequiresAction {
		t.Fatalf("reason %s; log %v", out.Reason, e.log.types())
	}
	if slices.Contains(e.log.types(), core.TypeAgentToolResult) {
		t.Fatal("the waiting call was closed as interrupted")
	}
}

func TestToolOutputIsCapped(t *testing.T) {
	tests := []struct {
		name, output, want string
	}{
		{"long, cut on a rune boundary", strings.Repeat("€", 100), "[output truncated: showing the first 63 of 300 bytes]"},
		{"binary", "PNG\x00\x01\x02", "[binary output of 6 bytes not shown]"},
		{"short", "fine", "fine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &echoTool{name: "dump", output: tt.output}
			e := newEnv(t, fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_1", "dump", `{}`)}}, fakemodel.Step{Text: "ok"})
			e.cycle.Tools = registry(t, func(r *toolset.Registry) { _ = r.Add(tool, core.PolicyAllow) })
			e.cycle.MaxToolOutput = 64
			e.say("dump it")
			e.run(t, context.Background())
			res := lastResult(t, e.log)
			if !strings.Contains(res.Output, tt.want) || len(res.Output) > 64+80 {
				t.Fatalf("output %q", res.Output)
			}
		})
	}
}

// TestStaleAnswersNeverReachTheModel: a custom tool result or confirmation
// that answers no open call (never made, or answered already) stays in the
// log at internal level and is left out of the model's context, which a
// real model API would refuse.
func TestStaleAnswersNeverReachTheModel(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_c", "lookup_order", `{"id":7}`)}},
		fakemodel.Step{Text: "order 7 shipped"},
		fakemodel.Step{Text: "noted"},
	)
	e.cycle.Tools = registry(t, func(r *toolset.Registry) {
		_ = r.Add(toolset.CustomTool{Spec: core.ToolSpec{Type: "custom", Name: "lookup_order"}}, core.PolicyAllow)
	})
	e.say("where is order 7?")
	e.run(t, context.Background())
	e.log.queue(core.TypeUserCustomToolResult, core.CustomToolResultBody{ToolUseID: "tu_c", Output: "shipped yesterday"})
	e.run(t, context.Background())

	e.log.queue(core.TypeUserCustomToolResult, core.CustomToolResultBody{ToolUseID: "tu_ghost", Output: "from nowhere"})
	e.log.queue(core.TypeUserCustomToolResult, core.CustomToolResultBody{ToolUseID: "tu_c", Output: "shipped twice"})
	e.log.queue(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: "tu_other", Result: "allow"})
	e.say("thanks")
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("reason %s", out.Reason)
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	results := 0
	for _, m := range reqs[2].Messages {
		for _, b := range m.Content {
			if b.Type == core.BlockToolResult {
				results++
				if b.Output != "shipped yesterday" {
					t.Fatalf("a stale answer reached the model: %+v", b)
				}
			}
		}
	}
	if results != 1 {
		t.Fatalf("%d tool results in the context, want the one answer", results)
	}
	stale := 0
	for _, ev := range e.log.events {
		if ev.Type == core.TypeUserCustomToolResult || ev.Type == core.TypeUserToolConfirmation {
			if ev.Level != core.LevelInternal {
				t.Fatalf("%s logged at %s", ev.Type, ev.Level)
			}
			stale++
		}
	}
	if stale != 4 {
		t.Fatalf("%d answers in the log, want all 4 kept", stale)
	}
}

// TestAsideKeepsTheQuestionOpen: a message marked aside while a call waits
// for a person leaves the call waiting (the turn ends again at once,
// without a model call); the answer then runs it, and the model reads the
// aside beside the result.
func TestAsideKeepsTheQuestionOpen(t *testing.T) {
	e, del := waitingForDelete(t)
	e.log.queue(core.TypeUserMessage, core.MessageBody{Text: "also keep main", Kind: core.MessageKindAside})
	if out := e.run(t, context.Background()); out.Reason != core.ReasonRequiresAction || del.calls.Load() != 0 || len(e.model.Requests()) != 1 {
		t.Fatalf("after the aside: %s, %d calls, %d model requests", out.Reason, del.calls.Load(), len(e.model.Requests()))
	}
	var tc core.TurnCompletedBody
	if err := e.log.last(core.TypeTurnCompleted).Decode(&tc); err != nil || !slices.Equal(tc.PendingToolUseIDs, []string{"tu_d"}) {
		t.Fatalf("the call no longer waits: %+v", tc)
	}
	e.log.queue(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: "tu_d", Result: "allow"})
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted || del.calls.Load() != 1 {
		t.Fatalf("after allow: %s, %d calls", out.Reason, del.calls.Load())
	}
	req := e.model.Requests()[1]
	last := req.Messages[len(req.Messages)-1]
	if last.Role != core.RoleUser || last.Content[0].Type != core.BlockToolResult || last.Content[0].Output != "deleted" ||
		len(last.Content) < 2 || last.Content[1].Text != "also keep main" {
		t.Fatalf("second request ends with %+v", last)
	}
}
