package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
)

// TestRetry: a user.retry after a turn that failed starts a new turn in
// which the model sees the failed turn's work, its input and why it
// ended; the tool call that turn already ran is not run again.
func TestRetry(t *testing.T) {
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{{Type: core.BlockToolUse, ToolUseID: "c1", Name: "say", Input: []byte(`{"text":"opening the PR"}`)}}},
		fakemodel.Step{Err: &core.ModelError{Message: "overloaded, try later"}},
		fakemodel.Step{Text: "the PR is open"},
	)
	e.say("open the PR")
	e.run(t, context.Background())
	wantStatus(t, e.log, core.StatusFailed, core.ReasonError)

	e.log.queue(core.TypeUserRetry, core.RetryBody{TurnID: "turn_x"})
	e.run(t, context.Background())
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)

	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	msgs := reqs[2].Messages
	first, last := msgs[0], msgs[len(msgs)-1]
	if first.Role != core.RoleUser || first.Content[0].Text != "open the PR" {
		t.Fatalf("the retried turn's request starts with %+v, want the same input", first)
	}
	var sawCall bool
	for _, m := range msgs {
		for _, b := range m.Content {
			sawCall = sawCall || b.Type == core.BlockToolUse && b.ToolUseID == "c1"
		}
	}
	note := last.Content[len(last.Content)-1].Text
	if !sawCall || last.Role != core.RoleUser || !strings.Contains(note, "retry the previous turn, which failed with this error: model: overloaded, try later") ||
		!strings.Contains(note, "do not repeat them") {
		t.Fatalf("the retried turn's request: call seen %v, last message %+v", sawCall, last)
	}
	says := 0
	for _, ev := range e.log.events {
		var b core.MessageBody
		if ev.Type == core.TypeAgentMessage && ev.Decode(&b) == nil && b.ToolUseID == "c1" {
			says++
		}
	}
	if says != 1 {
		t.Fatalf("the say of the failed turn ran %d times, want once", says)
	}
}
