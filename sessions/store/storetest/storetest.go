// Package storetest is the conformance suite for core.Store: every
// implementation (the bbolt store, any fake) runs Run and must pass it.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Run runs the suite. open must return a fresh, empty store for each
// subtest and close it when the test ends (t.Cleanup).
func Run[S core.Store](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s core.Store)
	}{
		{"agents/create", testAgentCreate},
		{"agents/invalid", testAgentInvalid},
		{"agents/unique_names", testAgentUniqueNames},
		{"agents/update_versions", testAgentUpdate},
		{"agents/update_rename", testAgentRename},
		{"agents/list_paging", testAgentList},
		{"sessions/create_idle", testCreateIdle},
		{"sessions/create_queued", testCreateQueued},
		{"sessions/create_invalid_input", testCreateInvalidInput},
		{"sessions/external_key", testCreateExternalKey},
		{"sessions/external_key_archived", testCreateExternalKeyArchived},
		{"sessions/idempotency", testCreateIdempotency},
		{"sessions/dedupe", testCreateDedupe},
		{"sessions/claim_race", testCreateClaimRace},
		{"sessions/only_existing_and_start_inputs", testCreateOnlyExisting},
		{"sessions/list", testListSessions},
		{"sessions/list_filters", testListFilters},
		{"sessions/list_text_cap", testListTextCap},
		{"text/messages_kept_as_sent", testMessageText},
		{"text/keys_and_filters_refused", testKeyText},
		{"queue/errors", testQueueErrors},
		{"queue/order_and_status", testQueueOrder},
		{"queue/idempotency_dedupe", testQueueKeys},
		{"queue/answers_pending", testQueueAnswersPending},
		{"append/concurrent_gap_free", testAppendConcurrent},
		{"append/take_inputs", testAppendTakeInputs},
		{"append/stamps", testAppendStamps},
		{"append/empty_writes_nothing", testAppendEmpty},
		{"append/errors", testAppendErrors},
		{"append/projection", testAppendProjection},
		{"append/cost", testAppendCost},
		{"append/result", testAppendResult},
		{"budget/pause_and_raise", testBudgetPause},
		{"budget/turns_counted", testTurnsCounted},
		{"turn/wait_in_turn", testWaitInTurn},
		{"budget/set_limits", testSetLimits},
		{"sessions/fork", testFork},
		{"links/add_remove", testLinks},
		{"links/race", testLinkRace},
		{"attachments/put_get", testAttachments},
		{"events/paging", testEventsPaging},
		{"wake/schedule", testWakeSchedule},
		{"wake/move", testWakeMove},
		{"wake/fenced", testWakeFenced},
		{"wake/clear_unless_queued", testWakeClearUnlessQueued},
		{"wake/clear_races_queue", testWakeClearRacesQueue},
		{"wake/queue_and_turn", testWakeQueueAndTurn},
		{"wake/open_turns", testOpenTurns},
		{"leases/take_renew_release", testLeaseTakeRenewRelease},
		{"leases/fence_appends", testLeaseFencesAppends},
		{"leases/affinity", testLeaseAffinity},
		{"leases/previous", testLeasePrevious},
		{"archive", testArchive},
		{"sweep", testSweep},
		{"commits/order", testCommitsOrder},
		{"commits/lag", testCommitsLag},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

// nextMillisecond returns once the wall clock is past the millisecond it
// was in: what is stamped or given an id from now on is later.
func nextMillisecond() {
	for ms := time.Now().UnixMilli(); time.Now().UnixMilli() == ms; {
		time.Sleep(100 * time.Microsecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameJSON compares by wire form, which is what clients see.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func message(text string) core.Event {
	return core.NewInput(core.TypeUserMessage, json.RawMessage(fmt.Sprintf(`{"text":%q}`, text)))
}

func interrupt() core.Event { return core.NewInput(core.TypeUserInterrupt, nil) }

func textOf(t *testing.T, e core.Event) string {
	t.Helper()
	var b core.MessageBody
	if err := e.Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Text
}

func texts(t *testing.T, events []core.Event) []string {
	t.Helper()
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = textOf(t, e)
	}
	return out
}

func newAgent(t *testing.T, s core.Store, name string) *core.Agent {
	t.Helper()
	a, err := s.CreateAgent(t.Context(), &core.Agent{Name: name, Model: "anthropic/claude-test", System: "be brief"})
	must(t, err)
	return a
}

func newSession(t *testing.T, s core.Store, inputs ...core.Event) *core.Session {
	t.Helper()
	res, err := s.CreateSession(t.Context(), core.NewSession{
		Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}},
		Inputs:  inputs,
	})
	must(t, err)
	return res.Session
}

func getSession(t *testing.T, s core.Store, id string) *core.Session {
	t.Helper()
	sess, err := s.GetSession(t.Context(), id)
	must(t, err)
	return sess
}

func appendEvents(t *testing.T, s core.Store, id string, req core.AppendRequest) []core.Event {
	t.Helper()
	out, err := s.Append(t.Context(), id, req)
	must(t, err)
	return out
}

func statusEvent(st core.Status, r core.Reason) core.Event {
	return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: st, StopReason: r})
}

func turnStarted() core.Event {
	return core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})
}

func turnCompleted(r core.Reason, u core.Usage, pending ...string) core.Event {
	return core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem,
		core.TurnCompletedBody{YieldReason: r, Usage: u, PendingToolUseIDs: pending})
}

func agentMessage(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text})
}

// allSessions pages through every session.
func allSessions(t *testing.T, s core.Store, f core.SessionFilter) []*core.Session {
	t.Helper()
	var out []*core.Session
	for {
		page, err := s.ListSessions(t.Context(), f)
		must(t, err)
		out = append(out, page.Sessions...)
		if !page.HasMore {
			return out
		}
		if page.Next == "" {
			t.Fatalf("a page with more has no next (filter %+v)", f)
		}
		f.After = page.Next
	}
}

// checkCounts proves CountByStatus agrees with the sessions themselves.
func checkCounts(t *testing.T, s core.Store) map[core.Status]int {
	t.Helper()
	want := map[core.Status]int{}
	for _, sess := range allSessions(t, s, core.SessionFilter{Limit: 1000}) {
		want[sess.Status]++
	}
	got, err := s.CountByStatus(t.Context())
	must(t, err)
	for _, st := range []core.Status{core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput, core.StatusIdle, core.StatusFailed, core.StatusArchived} {
		if got[st] != want[st] {
			t.Fatalf("CountByStatus = %v, sessions say %v", got, want)
		}
	}
	return got
}

func sortedIDs[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	sort.Strings(out)
	return out
}
