package acpclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/sessions/engine/acpclient"
)

// TestAgentFailures: an agent that crashes mid-turn, writes what is not
// ACP, or never answers initialize ends its turn with a session.error
// naming its command (and what it said), within the configured timeout;
// the session takes the next message with a new process.
func TestAgentFailures(t *testing.T) {
	three := 3
	for _, tc := range []struct {
		name   string
		script acpagent.Script
		want   []string
	}{
		{"crash", acpagent.Script{Turns: []acpagent.Turn{{Match: "first", Steps: []acpagent.Step{{Say: "starting"}, {Exit: &three}}}, {Match: "again", Steps: []acpagent.Step{{Say: "fine now"}}}}},
			[]string{`"scripted-acp --stdio"`, "status 3", "the last words on stderr"}},
		{"garbage", acpagent.Script{Garbage: "Welcome to Agent v2! Type /help"},
			[]string{`"scripted-acp --stdio"`, "did not answer initialize", "Welcome to Agent v2! Type /help"}},
		{"silent", acpagent.Script{NeverInitialize: true},
			[]string{`"scripted-acp --stdio"`, "did not answer initialize within 200ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.script)
			if tc.script.NeverInitialize {
				// Only the silent agent waits it out; the others answer at
				// once, however busy the machine.
				e.h.InitTimeout = 200 * time.Millisecond
			}
			e.say("first")
			if out := e.run(context.Background()); out.Reason != core.ReasonError {
				t.Fatalf("outcome %+v", out)
			}
			evs := e.events()
			msg := body[core.ErrorBody](t, last(evs, core.TypeError)).Message
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q does not say %q", msg, w)
				}
			}
			if s := e.sessionNow(); s.Status != core.StatusFailed || s.TurnID != "" {
				t.Fatalf("session %+v", s)
			}
			if tc.name != "crash" {
				return
			}
			e.say("again")
			if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("the next message: %+v (log %v)", out, typesOf(e.events()))
			}
			if e.sb.starts != 2 {
				t.Fatalf("%d processes started, want a new one after the crash", e.sb.starts)
			}
		})
	}
}

// TestLoadAfterHibernation: with an agent that can load sessions, the
// turn after the sandbox stopped starts a new process that loads the
// same ACP session (its replay is not logged again); without, it opens a
// new one told the log so far. The log says which.
func TestLoadAfterHibernation(t *testing.T) {
	for _, load := range []bool{true, false} {
		t.Run(map[bool]string{true: "load", false: "summary"}[load], func(t *testing.T) {
			e := newEnv(t, acpagent.Script{LoadSession: load, Turns: []acpagent.Turn{
				{Match: "first", Steps: []acpagent.Step{{Say: "The answer is 42."}}},
				{Match: "second", Steps: []acpagent.Step{{Say: "Still 42."}}},
			}})
			e.say("first question")
			e.run(context.Background())
			e.sb.hibernate()
			e.say("second question")
			if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("outcome %+v", out)
			}
			if e.sb.starts != 2 {
				t.Fatalf("%d processes, want a new one after hibernation", e.sb.starts)
			}
			var starts []core.RuntimeStartedBody
			for _, ev := range e.events() {
				if ev.Type == core.TypeRuntimeStarted {
					starts = append(starts, body[core.RuntimeStartedBody](t, ev))
				}
				if ev.Type == core.TypeAgentMessage && strings.Contains(string(ev.Body), "replayed") {
					t.Fatal("the replay of a loaded session was logged")
				}
			}
			prompts := e.asked("session/prompt")
			second := prompts[len(prompts)-1]["text"].(string)
			if load {
				if len(starts) != 2 || starts[1].How != core.RuntimeLoaded || starts[1].AgentSession != starts[0].AgentSession {
					t.Fatalf("runtime starts %+v", starts)
				}
				if l := e.asked("session/load"); len(l) != 1 || l[0]["session"] != starts[0].AgentSession {
					t.Fatalf("loads %v", l)
				}
				if strings.Contains(second, "42") || strings.Contains(second, "You are terse.") {
					t.Fatalf("a loaded session is told what it knows: %q", second)
				}
				return
			}
			if len(starts) != 2 || starts[1].How != core.RuntimeSummary || starts[1].AgentSession == starts[0].AgentSession {
				t.Fatalf("runtime starts %+v", starts)
			}
			for _, w := range []string{"You are terse.", "Person: first question", "You: The answer is 42.", "second question"} {
				if !strings.Contains(second, w) {
					t.Fatalf("the new session's prompt lacks %q: %q", w, second)
				}
			}
		})
	}
}

// TestResumeAfterCrash: a turn left open by a process that died is taken
// up by a new agent process: its open tool call gets the "interrupted"
// result and the agent is asked to carry on; a turn that waited on a
// permission request ends requires_action, its answer to come.
func TestResumeAfterCrash(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Match: "Refactor", Steps: []acpagent.Step{{Say: "Resumed and done."}}}}})
	e.say("Refactor the parser")
	ctx := context.Background()
	e.leftOpen("turn_1",
		core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "tu_open", Name: "Editing parser.go", Input: []byte(`{}`)}),
	)
	if out := e.run(ctx); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v (log %v)", out, typesOf(e.events()))
	}
	evs := e.events()
	if r := body[core.ToolResultBody](t, evs[4]); r.ToolUseID != "tu_open" || !r.IsError || !strings.Contains(r.Output, "interrupted by restart") {
		t.Fatalf("open call's result %+v", r)
	}
	prompt := e.asked("session/prompt")[0]["text"].(string)
	if !strings.Contains(prompt, "gateway restarted") || !strings.Contains(prompt, "Refactor the parser") {
		t.Fatalf("resumed prompt %q", prompt)
	}

	// A turn that waited on a person when its process died.
	e.say("Delete the old files")
	e.leftOpen("turn_2",
		core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "tu_ask", Name: "Deleting old/", Input: []byte(`{}`)}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonRequiresAction, PendingAction: &core.PendingAction{ToolUseIDs: []string{"tu_ask"}}}),
	)
	if out := e.run(ctx); out.Reason != core.ReasonRequiresAction {
		t.Fatalf("outcome %+v", out)
	}
	if s := e.sessionNow(); s.Status != core.StatusAwaitingInput || s.TurnID != "" || s.PendingAction == nil || s.PendingAction.ToolUseIDs[0] != "tu_ask" {
		t.Fatalf("session %+v", s)
	}
}

// holders is a lease store's word on who holds each session.
type holders map[string]string

func (h holders) LastHolder(_ context.Context, id string) (string, error) { return h[id], nil }

// TestFenced: a sandbox's model and tool traffic is refused once the
// store says another replica holds its session.
func TestFenced(t *testing.T) {
	h := &acpclient.Harness{Leases: holders{"ses_here": "replica-a", "ses_moved": "replica-b"}, Holder: "replica-a"}
	for id, want := range map[string]bool{"ses_here": false, "ses_moved": true, "ses_never": false} {
		if got := h.Fenced(context.Background(), id) != ""; got != want {
			t.Errorf("Fenced(%s) = %v, want %v", id, got, want)
		}
	}
	if (&acpclient.Harness{}).Fenced(context.Background(), "ses_moved") != "" {
		t.Error("a harness without leases fenced a session")
	}
}
