package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func testAppendConcurrent(t *testing.T, s core.Store) {
	const writers, each = 32, 4
	sess := newSession(t, s)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				out, err := s.Append(t.Context(), sess.ID, core.AppendRequest{Events: []core.Event{agentMessage(fmt.Sprintf("w%d-%d", w, i))}})
				if err == nil && len(out) != 1 {
					err = fmt.Errorf("append returned %d events", len(out))
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	events, err := s.Events(t.Context(), sess.ID, 0, 0)
	must(t, err)
	if len(events) != writers*each {
		t.Fatalf("%d events, want %d", len(events), writers*each)
	}
	ids := map[string]bool{}
	lastOf := map[int]int{}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: not gap-free", i, e.Seq)
		}
		ids[e.ID] = true
		// Each writer's events appear in the order it appended them.
		var w, n int
		if _, err := fmt.Sscanf(textOf(t, e), "w%d-%d", &w, &n); err != nil {
			t.Fatal(err)
		}
		if prev, ok := lastOf[w]; ok && n != prev+1 {
			t.Fatalf("writer %d: event %d after %d", w, n, prev)
		}
		lastOf[w] = n
	}
	if len(ids) != writers*each {
		t.Fatalf("%d distinct ids for %d events", len(ids), writers*each)
	}
	if got := getSession(t, s, sess.ID).LastSeq; got != writers*each {
		t.Fatalf("last_seq = %d", got)
	}
}

func testAppendTakeInputs(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("1"), message("2"))
	_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{interrupt(), message("3")}})
	must(t, err)
	queued, err := s.Pending(ctx, sess.ID)
	must(t, err)
	before := time.Now().Add(-time.Second)
	out := appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "w1", Events: []core.Event{turnStarted()}})
	if len(out) != 4 {
		t.Fatalf("appended %d events, want 3 inputs up to the interrupt and turn.started", len(out))
	}
	wantTypes := []string{core.TypeUserMessage, core.TypeUserMessage, core.TypeUserInterrupt, core.TypeTurnStarted}
	for i, e := range out {
		if e.Type != wantTypes[i] || e.Seq != uint64(i+1) || e.TurnID != "turn_1" || e.SessionID != sess.ID {
			t.Fatalf("event %d = %+v", i, e)
		}
		if i < 3 {
			if e.ID != queued[i].ID || e.ProcessedAt == nil || e.ProcessedAt.Before(before) || e.QueuedAt == nil ||
				!e.QueuedAt.Equal(queued[i].QueuedAt.Time) || !e.CreatedAt.Equal(queued[i].CreatedAt.Time) {
				t.Fatalf("taken input %d = %+v (queued as %+v)", i, e, queued[i])
			}
		}
	}
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{"3"}) {
		t.Fatalf("left pending = %v", got)
	}
	logged, err := s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	sameJSON(t, "returned vs logged", out, logged)

	out = appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true})
	if len(out) != 1 || out[0].Seq != 5 || textOf(t, out[0]) != "3" || out[0].TurnID != "" {
		t.Fatalf("second take = %+v", out)
	}
}

func testAppendStamps(t *testing.T, s core.Store) {
	sess := newSession(t, s)
	own := agentMessage("own turn")
	own.TurnID = "turn_own"
	own.ID = "evt_mine"
	out := appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_req", Events: []core.Event{agentMessage("x"), own}})
	if len(out) != 2 {
		t.Fatalf("appended %d", len(out))
	}
	a, b := out[0], out[1]
	if !core.HasPrefix(a.ID, core.PrefixEvent) || a.SessionID != sess.ID || a.CreatedAt.IsZero() || a.TurnID != "turn_req" || a.Seq != 1 ||
		a.Level != core.LevelUser || a.Actor != core.ActorAgent {
		t.Fatalf("stamped = %+v", a)
	}
	if b.ID != "evt_mine" || b.TurnID != "turn_own" || b.Seq != 2 {
		t.Fatalf("caller's id and turn must be kept: %+v", b)
	}
	got := getSession(t, s, sess.ID)
	if got.LastSeq != 2 || got.UpdatedAt.Before(sess.UpdatedAt.Time) {
		t.Fatalf("session after append = %+v", got)
	}
}

func testAppendEmpty(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s)
	nextMillisecond() // so a write would move updated_at
	for _, req := range []core.AppendRequest{{}, {TakeInputs: true}, {TakeInputs: true, TurnID: "turn_x"}} {
		out, err := s.Append(ctx, sess.ID, req)
		must(t, err)
		if out != nil {
			t.Fatalf("empty append returned %v", out)
		}
	}
	sameJSON(t, "session after empty appends", getSession(t, s, sess.ID), sess)
	events, err := s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	if len(events) != 0 {
		t.Fatalf("%d events logged", len(events))
	}
}

func testAppendErrors(t *testing.T, s core.Store) {
	ctx := t.Context()
	_, err := s.Append(ctx, "ses_missing", core.AppendRequest{Events: []core.Event{agentMessage("x")}})
	wantErr(t, err, core.ErrNotFound)
	sess := newSession(t, s)
	_, err = s.Append(ctx, sess.ID, core.AppendRequest{Events: []core.Event{{Body: []byte(`{}`)}}})
	wantErr(t, err, core.ErrInvalid)
	_, err = s.Append(ctx, sess.ID, core.AppendRequest{Events: []core.Event{agentMessage("ok"), {Type: core.TypeAgentMessage, Body: []byte(`{bad`)}}})
	wantErr(t, err, core.ErrInvalid)
	if got := getSession(t, s, sess.ID); got.LastSeq != 0 {
		t.Fatalf("a refused append logged events: last_seq %d", got.LastSeq)
	}
	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	_, err = s.Append(ctx, sess.ID, core.AppendRequest{Events: []core.Event{agentMessage("x")}})
	wantErr(t, err, core.ErrArchived)
	_, err = s.Events(ctx, "ses_missing", 0, 0)
	wantErr(t, err, core.ErrNotFound)
}

func testAppendProjection(t *testing.T, s core.Store) {
	sess := newSession(t, s, message("go"))
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "w1", Events: []core.Event{
		statusEvent(core.StatusRunning, ""), turnStarted(),
	}})
	got := getSession(t, s, sess.ID)
	if got.Status != core.StatusRunning || got.TurnID != "turn_1" || got.LastSeq != 3 {
		t.Fatalf("after start = %+v", got)
	}
	if counts := checkCounts(t, s); counts[core.StatusRunning] != 1 {
		t.Fatalf("counts = %v", counts)
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{
		agentMessage("need a tool"),
		turnCompleted(core.ReasonRequiresAction, core.Usage{InputTokens: 10, OutputTokens: 5}, "tu_1", "tu_2"),
		statusEvent(core.StatusAwaitingInput, core.ReasonRequiresAction),
	}})
	got = getSession(t, s, sess.ID)
	if got.Status != core.StatusAwaitingInput || got.StopReason != core.ReasonRequiresAction || got.TurnID != "" || got.LastSeq != 6 ||
		got.Usage != (core.Usage{InputTokens: 10, OutputTokens: 5}) || got.PendingAction == nil ||
		!slices.Equal(got.PendingAction.ToolUseIDs, []string{"tu_1", "tu_2"}) {
		t.Fatalf("after requires_action = %+v (pending %+v)", got, got.PendingAction)
	}
	if counts := checkCounts(t, s); counts[core.StatusAwaitingInput] != 1 || counts[core.StatusRunning] != 0 {
		t.Fatalf("counts = %v", counts)
	}
	// The next turn.started clears the pending action; usage accumulates.
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_2", Holder: "w2", Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	got = getSession(t, s, sess.ID)
	if got.PendingAction != nil || got.TurnID != "turn_2" {
		t.Fatalf("after second start = %+v", got)
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_2", Events: []core.Event{
		turnCompleted(core.ReasonCompleted, core.Usage{InputTokens: 1, OutputTokens: 2}),
		statusEvent(core.StatusIdle, core.ReasonCompleted),
	}})
	got = getSession(t, s, sess.ID)
	if got.Status != core.StatusIdle || got.StopReason != core.ReasonCompleted || got.PendingAction != nil || got.TurnID != "" ||
		got.Usage != (core.Usage{InputTokens: 11, OutputTokens: 7}) || got.LastSeq != 10 {
		t.Fatalf("after completed = %+v", got)
	}
	if counts := checkCounts(t, s); counts[core.StatusIdle] != 1 || len(nonZero(counts)) != 1 {
		t.Fatalf("counts = %v", counts)
	}
}

func nonZero(m map[core.Status]int) map[core.Status]int {
	out := map[core.Status]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func testEventsPaging(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s)
	for i := range 10 {
		appendEvents(t, s, sess.ID, core.AppendRequest{Events: []core.Event{agentMessage(fmt.Sprint(i + 1))}})
	}
	seqs := func(after uint64, limit int) []uint64 {
		events, err := s.Events(ctx, sess.ID, after, limit)
		must(t, err)
		var out []uint64
		for _, e := range events {
			if textOf(t, e) != fmt.Sprint(e.Seq) {
				t.Fatalf("seq %d holds %q", e.Seq, textOf(t, e))
			}
			out = append(out, e.Seq)
		}
		return out
	}
	if got := seqs(0, 0); len(got) != 10 || got[0] != 1 || got[9] != 10 {
		t.Fatalf("all = %v", got)
	}
	if got := seqs(3, 4); !slices.Equal(got, []uint64{4, 5, 6, 7}) {
		t.Fatalf("after 3 limit 4 = %v", got)
	}
	if got := seqs(8, 0); !slices.Equal(got, []uint64{9, 10}) {
		t.Fatalf("after 8 = %v", got)
	}
	if got := seqs(10, 5); len(got) != 0 {
		t.Fatalf("after last = %v", got)
	}
}

// testAppendCost: a session's usage sums its turns' usage, cached tokens
// included, and its cost sums the cost of the turns that had a price: nil
// until one had, unpriced turns adding nothing, rounded to the
// nano-dollar so that 0.1 + 0.2 reads 0.3.
func testAppendCost(t *testing.T, s core.Store) {
	sess := newSession(t, s)
	turn := func(u core.Usage, cost *float64) {
		t.Helper()
		id := core.NewID("turn")
		appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: id, Holder: "w1", Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
		done := core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem,
			core.TurnCompletedBody{YieldReason: core.ReasonCompleted, Usage: u, CostUSD: cost})
		appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: id, Events: []core.Event{done, statusEvent(core.StatusIdle, core.ReasonCompleted)}})
	}
	turn(core.Usage{InputTokens: 3, OutputTokens: 1, CacheReadInputTokens: 100}, nil)
	if got := getSession(t, s, sess.ID); got.CostUSD != nil {
		t.Fatalf("cost after an unpriced turn = %v, want nil", *got.CostUSD)
	}
	turn(core.Usage{InputTokens: 5, OutputTokens: 2, CacheCreationInputTokens: 40}, usd(0.1))
	turn(core.Usage{InputTokens: 1, OutputTokens: 1}, nil)
	turn(core.Usage{InputTokens: 1, OutputTokens: 1, CacheReadInputTokens: 7}, usd(0.2))
	got := getSession(t, s, sess.ID)
	if got.CostUSD == nil || *got.CostUSD != 0.3 {
		t.Fatalf("cost = %v, want 0.3", got.CostUSD)
	}
	want := core.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 107, CacheCreationInputTokens: 40}
	if got.Usage != want {
		t.Fatalf("usage = %+v, want %+v", got.Usage, want)
	}
	// The listed record carries them too.
	list, err := s.ListSessions(t.Context(), core.SessionFilter{})
	must(t, err)
	if len(list.Sessions) != 1 || list.Sessions[0].CostUSD == nil || *list.Sessions[0].CostUSD != 0.3 || list.Sessions[0].Usage != want {
		t.Fatalf("listed: %+v", list.Sessions)
	}
}

// testAppendResult: the session's result is its last finished turn's last
// user-level message (an answer, a question, the error that ended it),
// written in whichever append, with the reason the turn ended; nil before
// a turn finished; empty text for a turn that said nothing to a person.
func testAppendResult(t *testing.T, s core.Store) {
	sess := newSession(t, s)
	if got := getSession(t, s, sess.ID); got.Result != nil {
		t.Fatalf("result before any turn = %+v", got.Result)
	}
	userLevel := func(typ string, body any) core.Event {
		return core.NewEvent(typ, core.LevelUser, core.ActorAgent, body)
	}
	progress := core.NewEvent(core.TypeAgentMessage, core.LevelProgress, core.ActorAgent, core.MessageBody{Text: "reading the code"})
	tests := []struct {
		name    string
		appends [][]core.Event // between turn.started and turn.completed, one append each
		reason  core.Reason
		text    string
	}{
		{"answer after a say", [][]core.Event{
			{userLevel(core.TypeAgentMessage, core.MessageBody{Text: "on it", ToolUseID: "tu_say"}), progress},
			{userLevel(core.TypeAgentMessage, core.MessageBody{Text: "the answer is 42"})},
		}, core.ReasonCompleted, "the answer is 42"},
		{"a question", [][]core.Event{{userLevel(core.TypeAgentMessage, core.MessageBody{Text: "which branch?", ToolUseID: "tu_ask"})}}, core.ReasonNeedsInput, "which branch?"},
		{"an error", [][]core.Event{{core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "the model rejected the key"})}}, core.ReasonError, "the model rejected the key"},
		{"nothing said", [][]core.Event{{progress}}, core.ReasonCanceled, ""},
		// A long answer is cut at a character's boundary: the log has it
		// whole.
		{"a long answer", [][]core.Event{{userLevel(core.TypeAgentMessage, core.MessageBody{Text: strings.Repeat("é", 20000)})}},
			core.ReasonCompleted, strings.Repeat("é", (32<<10-len("…"))/2) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := core.NewID("turn")
			appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: turn, Holder: "w1", Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
			for _, evs := range tt.appends {
				appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: turn, Events: evs})
			}
			if got := getSession(t, s, sess.ID); got.Result != nil && got.Result.TurnID == turn {
				t.Fatalf("a result for the open turn: %+v", got.Result)
			}
			done := appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: turn, Events: []core.Event{
				turnCompleted(tt.reason, core.Usage{}), statusEvent(core.StatusAfter(tt.reason), tt.reason)}})
			got := getSession(t, s, sess.ID).Result
			want := &core.TurnResult{TurnID: turn, YieldReason: tt.reason, Text: tt.text, CompletedAt: done[0].CreatedAt}
			if got == nil || *got != *want {
				t.Fatalf("result = %+v, want %+v", got, want)
			}
		})
	}
}
