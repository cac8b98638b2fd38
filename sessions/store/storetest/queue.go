package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func testQueueErrors(t *testing.T, s core.Store) {
	ctx := t.Context()
	_, err := s.QueueInputs(ctx, "ses_missing", core.QueueRequest{Inputs: []core.Event{message("x")}})
	wantErr(t, err, core.ErrNotFound)

	sess := newSession(t, s)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{agentMessage("x")}})
	wantErr(t, err, core.ErrInvalid)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{{Type: "", Body: []byte(`{}`)}}})
	wantErr(t, err, core.ErrInvalid)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{})
	wantErr(t, err, core.ErrInvalid)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("x")}, Dedupe: []string{""}})
	wantErr(t, err, core.ErrInvalid)
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if len(pending) != 0 || getSession(t, s, sess.ID).Status != core.StatusIdle {
		t.Fatalf("refused input left %d pending", len(pending))
	}

	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("x")}})
	wantErr(t, err, core.ErrArchived)
}

func testQueueOrder(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s)
	before := time.Now().Add(-time.Second)
	res, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("1"), message("2")}})
	must(t, err)
	if res.Session.Status != core.StatusQueued || len(res.Inputs) != 2 || res.Duplicate || res.Replay != nil {
		t.Fatalf("result = %+v", res)
	}
	bare := core.Event{Type: core.TypeUserMessage, Level: core.LevelUser, Actor: core.ActorHuman, Body: []byte(`{"text": "3"}`)}
	res, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{bare}})
	must(t, err)
	in := res.Inputs[0]
	if !core.HasPrefix(in.ID, core.PrefixEvent) || in.SessionID != sess.ID || in.Seq != 0 || in.QueuedAt == nil ||
		in.QueuedAt.Before(before) || in.CreatedAt.IsZero() || in.ProcessedAt != nil {
		t.Fatalf("stamped input = %+v", in)
	}
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("pending = %v", got)
	}
	sameJSON(t, "queued as stored", pending[2], in)
	if counts := checkCounts(t, s); counts[core.StatusQueued] != 1 || counts[core.StatusIdle] != 0 {
		t.Fatalf("counts = %v", counts)
	}

	// A running session stays running: the input waits for the next step.
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, Events: []core.Event{statusEvent(core.StatusRunning, "")}})
	res, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("steer")}})
	must(t, err)
	if res.Session.Status != core.StatusRunning || getSession(t, s, sess.ID).Status != core.StatusRunning {
		t.Fatalf("status = %s, want running", res.Session.Status)
	}
	// Every other status goes to queued.
	appendEvents(t, s, sess.ID, core.AppendRequest{Events: []core.Event{statusEvent(core.StatusFailed, core.ReasonError)}})
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("retry")}})
	must(t, err)
	if got := getSession(t, s, sess.ID); got.Status != core.StatusQueued {
		t.Fatalf("failed session took input as %s", got.Status)
	}
	checkCounts(t, s)
}

func testQueueKeys(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s)
	idem := &core.Idempotency{Key: "api:events:1", Hash: "h", Answer: []byte(`{"ok":true}`)}
	_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("a")}, Idempotency: idem})
	must(t, err)
	res, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("a")}, Idempotency: idem})
	must(t, err)
	if string(res.Replay) != `{"ok":true}` || len(res.Inputs) != 0 {
		t.Fatalf("replay = %+v", res)
	}
	other := *idem
	other.Hash = "h2"
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("b")}, Idempotency: &other})
	wantErr(t, err, core.ErrConflict)

	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("c")}, Dedupe: []string{"gh:delivery:1"}})
	must(t, err)
	res, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("d")}, Dedupe: []string{"gh:delivery:1"}})
	must(t, err)
	if !res.Duplicate || len(res.Inputs) != 0 {
		t.Fatalf("duplicate = %+v", res)
	}
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("pending = %v", got)
	}
	// Keys are shared with CreateSession: a delivery seen there is seen here.
	_, err = s.CreateSession(ctx, core.NewSession{Dedupe: []string{"chat:Ev9"}})
	must(t, err)
	res, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("e")}, Dedupe: []string{"chat:Ev9"}})
	must(t, err)
	if !res.Duplicate {
		t.Fatalf("cross-method duplicate not detected: %+v", res)
	}
}

func toolAnswer(typ, toolUseID string) core.Event {
	if typ == core.TypeUserToolConfirmation {
		return core.NewInput(typ, json.RawMessage(fmt.Sprintf(`{"tool_use_id":%q,"result":"allow"}`, toolUseID)))
	}
	return core.NewInput(typ, json.RawMessage(fmt.Sprintf(`{"tool_use_id":%q,"output":"ok"}`, toolUseID)))
}

// testQueueAnswersPending: with AnswersPending, a tool answer must name a
// call the session's pending_action lists when it is queued; a replay of
// an accepted request still replays after the call is answered.
func testQueueAnswersPending(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("go"))
	for _, typ := range []string{core.TypeUserCustomToolResult, core.TypeUserToolConfirmation} {
		_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{toolAnswer(typ, "tu_1")}, AnswersPending: true})
		wantErr(t, err, core.ErrConflict)
		if err == nil || !strings.Contains(err.Error(), "tu_1") {
			t.Fatalf("the refusal does not name the call: %v", err)
		}
	}
	// Without the flag the store takes any answer (platform buttons).
	_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{toolAnswer(core.TypeUserToolConfirmation, "tu_0")}})
	must(t, err)

	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "w", Events: []core.Event{turnStarted()}})
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{
		turnCompleted(core.ReasonRequiresAction, core.Usage{}, "tu_1", "tu_2"),
		statusEvent(core.StatusAwaitingInput, core.ReasonRequiresAction),
	}})
	idem := &core.Idempotency{Key: "api:events:k", Hash: "h", Answer: []byte(`{"data":[]}`)}
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{
		toolAnswer(core.TypeUserCustomToolResult, "tu_1"), toolAnswer(core.TypeUserToolConfirmation, "tu_2"),
	}, Idempotency: idem, AnswersPending: true})
	must(t, err)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{
		message("also"), toolAnswer(core.TypeUserCustomToolResult, "tu_3"),
	}, AnswersPending: true})
	wantErr(t, err, core.ErrConflict)
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if len(pending) != 2 {
		t.Fatalf("%d pending, want the two answers (a refused request queues nothing)", len(pending))
	}

	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_2", Holder: "w", Events: []core.Event{turnStarted()}})
	res, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{
		toolAnswer(core.TypeUserCustomToolResult, "tu_1"), toolAnswer(core.TypeUserToolConfirmation, "tu_2"),
	}, Idempotency: idem, AnswersPending: true})
	must(t, err)
	if string(res.Replay) != `{"data":[]}` {
		t.Fatalf("replay after the answers were taken = %+v", res)
	}
}
