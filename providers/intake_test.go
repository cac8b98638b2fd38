package providers_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeruntime"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

func openStore(t *testing.T) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func message(text string) core.Event {
	return core.NewInput(core.TypeUserMessage, []byte(`{"text":"`+text+`"}`))
}

func pendingTexts(t *testing.T, s *bolt.Store, id string) []string {
	t.Helper()
	pending, err := s.Pending(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range pending {
		var b core.MessageBody
		_ = e.Decode(&b)
		out = append(out, e.Type+":"+b.Text)
	}
	return out
}

func TestRouter(t *testing.T) {
	const key = "slack:T1:C1:1.000100"
	origin := core.Origin{Provider: "slack", Key: key, TenantID: "T1", URL: "https://t1.slack.com/archives/C1/p1000100"}
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1"}

	t.Run("start, steer, repeat, stop", func(t *testing.T) {
		s := openStore(t)
		rt := fakeruntime.Follow(s)
		def, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"})
		if err != nil {
			t.Fatal(err)
		}
		r := &providers.Intake{Store: s}
		// A steer of a thread the agent is not in starts nothing, and
		// does not spend its dedupe key.
		res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("reply"), Dedupe: []string{"e0"}, Continue: true})
		if err != nil || res.Outcome != providers.NoSession {
			t.Fatalf("steer without a session: %+v, %v", res, err)
		}
		start := message("mention with context")
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Metadata: map[string]string{"k": "v"},
			Input: message("mention"), StartInput: &start, Dedupe: []string{"e1", "m1"}})
		if err != nil || res.Outcome != providers.Queued || !res.Created {
			t.Fatalf("start: %+v, %v", res, err)
		}
		sess := res.Session
		if sess.Agent.ID != def.ID || *sess.Origin != origin || sess.Metadata["k"] != "v" {
			t.Fatalf("session %+v origin %+v", sess, sess.Origin)
		}
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("reply"), Dedupe: []string{"e0"}, Continue: true})
		if err != nil || res.Outcome != providers.Queued || res.Created || res.Session.ID != sess.ID {
			t.Fatalf("steer: %+v, %v", res, err)
		}
		// The same message as another event (app_mention and message) is
		// one input: expected, so only a debug line; a repeat the platform
		// did not announce as a twin (a retry) stays visible at info.
		var logged bytes.Buffer
		r.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("mention"), Dedupe: []string{"e2", "m1"}, Twin: true})
		if err != nil || res.Outcome != providers.Duplicate || logged.Len() != 0 {
			t.Fatalf("twin: %+v, %v, logged %q", res, err, logged.String())
		}
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("mention"), Dedupe: []string{"e2", "m1"}})
		if err != nil || res.Outcome != providers.Duplicate || !strings.Contains(logged.String(), "repeated delivery") {
			t.Fatalf("repeat: %+v, %v, logged %q", res, err, logged.String())
		}
		r.Logger = nil
		res, err = r.Route(t.Context(), providers.Trigger{Origin: origin, Input: core.NewInput(core.TypeUserInterrupt, nil), Dedupe: []string{"stop1"}, Continue: true})
		if err != nil || res.Outcome != providers.Queued {
			t.Fatalf("stop: %+v, %v", res, err)
		}
		if got, want := pendingTexts(t, s, sess.ID), []string{"user.message:mention with context", "user.message:reply", "user.interrupt:"}; !slices.Equal(got, want) {
			t.Fatalf("pending %v, want %v", got, want)
		}
		// The commit stream, not the router, tells the runtime.
		if w, st := rt.Woken(), rt.Stopped(); !slices.Equal(w, []string{sess.ID, sess.ID}) || !slices.Equal(st, []string{sess.ID}) {
			t.Fatalf("woken %v, stopped %v", w, st)
		}
	})

	t.Run("bound agent", func(t *testing.T) {
		s := openStore(t)
		if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
			t.Fatal(err)
		}
		bound, err := s.CreateAgent(t.Context(), &core.Agent{Name: "triage", Model: "anthropic/y"})
		if err != nil {
			t.Fatal(err)
		}
		withAgent := *in
		withAgent.Agent = "triage"
		res, err := (&providers.Intake{Store: s}).Route(t.Context(), providers.Trigger{Installation: &withAgent, Origin: origin, Input: message("hi")})
		if err != nil || res.Session.Agent.ID != bound.ID {
			t.Fatalf("%+v, %v", res, err)
		}
	})

	t.Run("tenant", func(t *testing.T) {
		s := openStore(t)
		if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
			t.Fatal(err)
		}
		r := &providers.Intake{Store: s}
		res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Tenant: "slack:T1", Input: message("hi"), Dedupe: []string{"e1"}})
		if err != nil || !res.Created || res.Session.Tenant != "slack:T1" {
			t.Fatalf("start: %+v, %v", res, err)
		}
		// Fixed at creation: a later trigger naming another keeps it.
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Tenant: "slack:T2", Input: message("again"), Dedupe: []string{"e2"}})
		if err != nil || res.Created || res.Session.Tenant != "slack:T1" {
			t.Fatalf("again: %+v, %v", res, err)
		}
		stored, err := s.SessionByKey(t.Context(), key)
		if err != nil || stored.Tenant != "slack:T1" {
			t.Fatalf("stored %+v, %v", stored, err)
		}
	})

	t.Run("no agent", func(t *testing.T) {
		s := openStore(t)
		r := &providers.Intake{Store: s}
		res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("hi"), Dedupe: []string{"e1"}})
		if err != nil || res.Outcome != providers.NoAgent {
			t.Fatalf("%+v, %v", res, err)
		}
		if _, err := s.SessionByKey(t.Context(), key); err == nil {
			t.Fatal("a session was created without an agent")
		}
		// A session that exists keeps its own agent: a mention still
		// reaches it when the default agent is gone.
		if _, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_old", Version: 1}, Origin: &origin}, ExternalKey: key}); err != nil {
			t.Fatal(err)
		}
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("hi"), Dedupe: []string{"e1"}})
		if err != nil || res.Outcome != providers.Queued || res.Session.Agent.ID != "agt_old" {
			t.Fatalf("mention of an existing session without an agent: %+v, %v", res, err)
		}
	})

	t.Run("archived", func(t *testing.T) {
		s := openStore(t)
		if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
			t.Fatal(err)
		}
		r := &providers.Intake{Store: s}
		res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("hi")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Archive(t.Context(), res.Session.ID); err != nil {
			t.Fatal(err)
		}
		for _, cont := range []bool{false, true} {
			res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("again"), Dedupe: []string{"x"}, Continue: cont})
			if err != nil || res.Outcome != providers.Archived {
				t.Fatalf("continue=%v: %+v, %v", cont, res, err)
			}
		}
	})
}

// TestRouteBudget: a budget command sets the thread's session's budget
// when an approver writes it, resumes a paused turn, and is refused (with
// a note, nothing changed, nothing queued) for anyone else or a thread
// without a session.
func TestRouteBudget(t *testing.T) {
	const key = "slack:T1:C1:2.000100"
	origin := core.Origin{Provider: "slack", Key: key, TenantID: "T1"}
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1", BudgetApprovers: []string{"U_BOSS"}}
	s := openStore(t)
	if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	r := &providers.Intake{Store: s}
	five := &core.Limits{MaxSessionCostUSD: 5}

	res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("budget $5"), Budget: five, Actor: "U_BOSS"})
	if err != nil || res.Outcome != providers.BudgetRefused || res.Note == "" {
		t.Fatalf("budget for a thread without a session: %+v, %v", res, err)
	}
	started, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("go")})
	if err != nil {
		t.Fatal(err)
	}
	id := started.Session.ID
	for _, actor := range []string{"U_OTHER", ""} {
		res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("budget $5"), Budget: five, Actor: actor})
		if err != nil || res.Outcome != providers.BudgetRefused || !strings.Contains(res.Note, "budget approvers") {
			t.Fatalf("budget from %q: %+v, %v", actor, res, err)
		}
	}
	if got, _ := s.GetSession(t.Context(), id); got.Limits != nil {
		t.Fatalf("a refused command set limits %+v", got.Limits)
	}
	// Paused by a budget, then raised from the thread.
	if _, err := s.Append(t.Context(), id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{Budget: &core.BudgetPause{Name: core.BudgetCostUSD, Limit: 1, Spent: 1.2}}}),
	}}); err != nil {
		t.Fatal(err)
	}
	res, err = r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("budget $5"), Budget: five, Actor: "U_BOSS"})
	if err != nil || res.Outcome != providers.BudgetSet || res.Note != "This session's budget is now $5.00. Continuing where I paused." {
		t.Fatalf("budget from an approver: %+v, %v", res, err)
	}
	got, _ := s.GetSession(t.Context(), id)
	if got.Limits == nil || got.Limits.MaxSessionCostUSD != 5 || got.Status != core.StatusQueued || got.BudgetPaused() {
		t.Fatalf("after the raise %+v limits %+v", got, got.Limits)
	}
	if p := pendingTexts(t, s, id); len(p) != 0 {
		t.Fatalf("a budget command queued %v", p)
	}
}

// TestRouteSourceKey: an input records the key it came from, a linked
// key's as well as the origin's.
func TestRouteSourceKey(t *testing.T) {
	const key, linked = "slack:T1:C1:3.000100", "github:acme/app#7"
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1"}
	s := openStore(t)
	if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	r := &providers.Intake{Store: s}
	res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: core.Origin{Provider: "slack", Key: key}, Input: message("start")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLink(t.Context(), res.Session.ID, core.LinkBody{Key: linked, By: core.LinkedByAgent}); err != nil {
		t.Fatal(err)
	}
	steer, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: core.Origin{Provider: "github", Key: linked}, Input: message("fix the nit"), Continue: true})
	if err != nil || steer.Outcome != providers.Queued || steer.Session.ID != res.Session.ID {
		t.Fatalf("a trigger on the link: %+v, %v", steer, err)
	}
	pending, err := s.Pending(t.Context(), res.Session.ID)
	if err != nil || len(pending) != 2 || pending[0].SourceKey != key || pending[1].SourceKey != linked {
		t.Fatalf("pending %+v (%v)", pending, err)
	}
}

// TestRouteBudgetStillHeld: a raise that leaves the paused turn over a
// limit says which limit still holds it, not that it continues.
func TestRouteBudgetStillHeld(t *testing.T) {
	tests := []struct {
		name   string
		agent  core.Limits
		paused core.BudgetPause
		raise  core.Limits
		note   string
	}{
		{"max_turns, tokens raised", core.Limits{MaxTurns: 1}, core.BudgetPause{Name: core.BudgetTurns, Limit: 1, Spent: 1},
			core.Limits{MaxSessionTokens: 20_000},
			"This session's budget is now 20,000 tokens. I stay paused: this session is still at its limit of 1 turn (max_turns); raise that to continue."},
		{"max_turns raised", core.Limits{MaxTurns: 1}, core.BudgetPause{Name: core.BudgetTurns, Limit: 1, Spent: 1},
			core.Limits{MaxTurns: 3},
			"This session's budget is now 3 turns. Continuing where I paused."},
		{"tokens, raised below spent", core.Limits{MaxSessionTokens: 1000}, core.BudgetPause{Name: core.BudgetTokens, Limit: 1000, Spent: 1500},
			core.Limits{MaxSessionTokens: 1200},
			"This session's budget is now 1,200 tokens. I stay paused: this session is still at its limit of 1,200 tokens (max_session_tokens); raise that to continue."},
		{"tokens, max_turns raised", core.Limits{MaxSessionTokens: 1000, MaxTurns: 5}, core.BudgetPause{Name: core.BudgetTokens, Limit: 1000, Spent: 1500},
			core.Limits{MaxTurns: 9},
			"This session's budget is now 9 turns. I stay paused: this session is still at its limit of 1,000 tokens (max_session_tokens); raise that to continue."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const key = "slack:T1:C1:4.000100"
			origin := core.Origin{Provider: "slack", Key: key, TenantID: "T1"}
			in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1", BudgetApprovers: []string{"U_BOSS"}}
			s := openStore(t)
			if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x", Limits: tt.agent}); err != nil {
				t.Fatal(err)
			}
			r := &providers.Intake{Store: s}
			started, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("go")})
			if err != nil {
				t.Fatal(err)
			}
			id := started.Session.ID
			// One turn finished, the next paused.
			if _, err := s.Append(t.Context(), id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h", Events: []core.Event{
				core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
				core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
				core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusIdle}),
			}}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("more")}); err != nil {
				t.Fatal(err)
			}
			paused := tt.paused
			if _, err := s.Append(t.Context(), id, core.AppendRequest{TakeInputs: true, TurnID: "turn_2", Holder: "h", Events: []core.Event{
				core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
				core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
					StopReason: paused.Reason(), PendingAction: &core.PendingAction{Budget: &paused}}),
			}}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.GetSession(t.Context(), id); got.Turns != 1 || !got.BudgetPaused() {
				t.Fatalf("set-up session %+v", got)
			}
			raise := tt.raise
			res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("budget"), Budget: &raise, Actor: "U_BOSS"})
			if err != nil || res.Outcome != providers.BudgetSet || res.Note != tt.note {
				t.Fatalf("raise: %+v, %v\nwant note %q", res, err, tt.note)
			}
		})
	}
}

// noVersions is a store that cannot read agent versions.
type noVersions struct{ *bolt.Store }

func (noVersions) GetAgentVersion(context.Context, string, int) (*core.Agent, error) {
	return nil, errors.New("store down")
}

// TestRouteBudgetAgentUnread: the limits are saved before the intake
// reads the agent to tell whether the turn goes on, so failing to read it
// answers the command without that word rather than failing it.
func TestRouteBudgetAgentUnread(t *testing.T) {
	const key = "slack:T1:C1:5.000100"
	origin := core.Origin{Provider: "slack", Key: key, TenantID: "T1"}
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1", BudgetApprovers: []string{"U_BOSS"}}
	s := openStore(t)
	if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	r := &providers.Intake{Store: noVersions{s}}
	started, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("go")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), started.Session.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{Budget: &core.BudgetPause{Name: core.BudgetCostUSD, Limit: 1, Spent: 1.2}}}),
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("budget $5"), Budget: &core.Limits{MaxSessionCostUSD: 5}, Actor: "U_BOSS"})
	if err != nil || res.Outcome != providers.BudgetSet || res.Note != "This session's budget is now $5.00." {
		t.Fatalf("raise: %+v, %v", res, err)
	}
}

// fakeIssuer records the attach tokens it makes.
type fakeIssuer struct{ made []string }

func (f *fakeIssuer) IssueAttachToken(_ context.Context, sessionID, person, personID, by string) (string, *core.AttachToken, error) {
	f.made = append(f.made, sessionID+" "+person+" "+personID+" "+by)
	return "sba_secret", &core.AttachToken{ID: "atk_1", SessionID: sessionID, Person: person}, nil
}

// TestRouteEditor: the editor command answers a private ask with a token
// naming the asker and the command line; a public one with where to get
// one and no token; a thread without a session with why; and queues
// nothing.
func TestRouteEditor(t *testing.T) {
	const key = "slack:T1:C1:3.000100"
	origin := core.Origin{Provider: "slack", Key: key, TenantID: "T1"}
	in := &core.Installation{ID: "ins_1", Provider: "slack", ExternalID: "T1"}
	s := openStore(t)
	if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	issuer := &fakeIssuer{}
	r := &providers.Intake{Store: s, AttachTokens: issuer, PublicURL: "https://gw.example.com"}
	editor := providers.Trigger{Installation: in, Origin: origin, Input: message("editor"), Editor: true, Private: true, Actor: "U_ADA", Person: "ada"}

	res, err := r.Route(t.Context(), editor)
	if err != nil || res.Outcome != providers.EditorAnswered || !strings.Contains(res.Note, "no session here") || len(issuer.made) != 0 {
		t.Fatalf("editor in a thread without a session: %+v, %v", res, err)
	}
	started, err := r.Route(t.Context(), providers.Trigger{Installation: in, Origin: origin, Input: message("go")})
	if err != nil {
		t.Fatal(err)
	}
	id := started.Session.ID
	res, err = r.Route(t.Context(), editor)
	if err != nil || res.Outcome != providers.EditorAnswered || !strings.Contains(res.Note, "SWITCHBOARD_TOKEN=sba_secret switchboard acp --url https://gw.example.com") ||
		len(issuer.made) != 1 || issuer.made[0] != id+" ada U_ADA slack:U_ADA" {
		t.Fatalf("editor asked privately: %+v, %v, made %v", res, err, issuer.made)
	}
	public := editor
	public.Private = false
	res, err = r.Route(t.Context(), public)
	if err != nil || res.Outcome != providers.EditorAnswered || strings.Contains(res.Note, "sba_") || !strings.Contains(res.Note, "/console/sessions/"+id) || len(issuer.made) != 1 {
		t.Fatalf("editor asked in public: %+v, %v, made %v", res, err, issuer.made)
	}
	if p := pendingTexts(t, s, id); len(p) != 1 {
		t.Fatalf("the editor command queued %v", p)
	}
}
