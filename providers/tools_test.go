package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// notePrimer gives every session one instruction, and counts its calls.
type notePrimer struct {
	text  string
	calls int
	err   error
}

func (p *notePrimer) Prime(_ context.Context, s *core.Session, a *core.Agent) ([]core.Event, error) {
	p.calls++
	if p.err != nil {
		return nil, p.err
	}
	return []core.Event{core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem,
		core.MessageBody{Text: p.text + " for " + a.Name, Kind: core.MessageKindInstructions})}, nil
}

// echoTools offers one tool named after the session's tenant.
type echoTools struct{}

func (echoTools) Tools(_ context.Context, s *core.Session, _ *core.Agent) ([]core.Tool, error) {
	return []core.Tool{namedTool("t_" + s.Tenant)}, nil
}

type namedTool string

func (n namedTool) Def() core.ToolDef {
	return core.ToolDef{Name: string(n), InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (namedTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	return core.ToolResult{}, nil
}

func TestToolsetPrimesOnceAndAddsSessionTools(t *testing.T) {
	s := openStore(t)
	a, err := s.CreateAgent(t.Context(), &core.Agent{Name: "helper", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	created, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: a.Version}, Tenant: "api"},
		Inputs: []core.Event{message("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Session.ID
	set, err := providers.NewSet(nil, providers.Deps{Logger: slog.New(slog.DiscardHandler)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	skills, repo := &notePrimer{text: "skills"}, &notePrimer{text: "repo"}
	tools := set.Toolset(providers.ToolsetConfig{Base: harness.Conversation(), SessionTools: []providers.SessionTools{echoTools{}},
		Primers: []providers.Primer{skills, repo}, Log: s, Logger: slog.New(slog.DiscardHandler)})

	for cycle := range 2 {
		sess, err := s.GetSession(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := tools(t.Context(), sess, a)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := reg.Get("t_api"); !ok {
			t.Fatalf("cycle %d: the session's own tool is not offered", cycle)
		}
		if _, _, ok := reg.Get("say"); !ok {
			t.Fatalf("cycle %d: the base tools are not offered", cycle)
		}
	}
	if skills.calls != 1 || repo.calls != 1 {
		t.Fatalf("primers called %d and %d times, want once each (the first cycle)", skills.calls, repo.calls)
	}
	events, err := s.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := harness.Derive("sys", events)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sys\n\nskills for helper\n\nrepo for helper"; mc.System != want {
		t.Fatalf("system %q, want %q", mc.System, want)
	}
}

func TestToolsetPrimerFailureFailsTheCycle(t *testing.T) {
	s := openStore(t)
	a, err := s.CreateAgent(t.Context(), &core.Agent{Name: "helper", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	created, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: a.Version}},
		Inputs: []core.Event{message("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := providers.NewSet(nil, providers.Deps{Logger: slog.New(slog.DiscardHandler)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("store down")
	tools := set.Toolset(providers.ToolsetConfig{Primers: []providers.Primer{&notePrimer{text: "ok"}, &notePrimer{err: boom}}, Log: s, Logger: slog.New(slog.DiscardHandler)})
	if _, err := tools(t.Context(), created.Session, a); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the primer's", err)
	}
	// Nothing was logged: the next cycle primes from the start.
	if events, _ := s.Events(t.Context(), created.Session.ID, 0, 0); len(events) != 0 {
		t.Fatalf("%d events logged by a failed priming", len(events))
	}
}
