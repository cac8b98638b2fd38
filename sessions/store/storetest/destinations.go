package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// DeliveryStore is what the deliveries suite needs: the session store (whose
// Append enqueues deliveries) with the destination store and the delivery queue.
type DeliveryStore interface {
	core.Store
	core.DestinationStore
	core.DeliveryQueue
}

// RunDeliveries runs the core.DestinationStore and core.DeliveryQueue suite. open
// must return a fresh, empty store for each subtest and close it when the
// test ends (t.Cleanup). Sealed secrets are opaque to a store, so the
// suite uses made-up ones.
func RunDeliveries[S DeliveryStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s DeliveryStore)
	}{
		{"destinations/create_get", testDestinationCreate},
		{"destinations/invalid", testDestinationInvalid},
		{"destinations/list", testDestinationList},
		{"destinations/with_session", testDestinationWithSession},
		{"outbox/filters", testDeliveriesFilters},
		{"outbox/stream_order", testDeliveriesOrder},
		{"outbox/retry_dead_does_not_block", testDeliveriesRetryDead},
		{"outbox/pause_resume", testDeliveriesPauseResume},
		{"outbox/pause_by_hand", testDeliveriesPauseByHand},
		{"outbox/redeliver", testDeliveriesRedeliver},
		{"outbox/delete_destination", testDeliveriesDelete},
		{"outbox/claims_exclusive", testClaimsExclusive},
		{"outbox/claims_expiry", testClaimsExpiry},
		{"outbox/claims_release", testClaimsRelease},
		{"deliveries/list", testDeliveryList},
		{"outbox/record_batch", testRecordBatch},
		{"outbox/send_ahead", testSendAhead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
	// The delivery cases again, with every attempt recorded by
	// RecordAttempts: a batch keeps each of RecordAttempt's promises.
	for _, tc := range tests {
		if strings.HasPrefix(tc.name, "outbox/") {
			t.Run("batched_"+tc.name, func(t *testing.T) { tc.fn(t, batchOfOne{open(t)}) })
		}
	}
}

// later is a "now" past everything the store has scheduled at its now.
func later() time.Time { return time.Now().Add(time.Second) }

func newDest(sessionID string, f core.EventFilter) core.NewDestination {
	return core.NewDestination{
		Destination: core.Destination{
			ID: core.NewID(core.PrefixDestination), URL: "https://hooks.example.com/in",
			SessionID: sessionID, AgentID: f.AgentID, Level: f.Level, Types: f.Types,
		},
		SealedSecret: []byte("sealed-secret"),
	}
}

func createDest(t *testing.T, s DeliveryStore, sessionID string, f core.EventFilter) *core.Destination {
	t.Helper()
	d, err := s.CreateDestination(t.Context(), newDest(sessionID, f))
	must(t, err)
	return d
}

func sessionOf(t *testing.T, s DeliveryStore, agentID string) *core.Session {
	t.Helper()
	res, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agentID, Version: 1}, Metadata: map[string]string{"ticket": "T-1"}}})
	must(t, err)
	return res.Session
}

func say(t *testing.T, s DeliveryStore, sessionID string, texts ...string) []core.Event {
	t.Helper()
	evs := make([]core.Event, len(texts))
	for i, txt := range texts {
		evs[i] = agentMessage(txt)
	}
	return appendEvents(t, s, sessionID, core.AppendRequest{Events: evs})
}

// claim claims for holder, for an hour, the streams due at a time past
// everything scheduled.
func claim(t *testing.T, s DeliveryStore, holder string) []core.ClaimedDelivery {
	t.Helper()
	out, _, err := s.ClaimDeliveries(t.Context(), holder, time.Hour, later(), 100)
	must(t, err)
	return out
}

func allDeliveries(t *testing.T, s DeliveryStore, q core.DeliveryQuery) []*core.Delivery {
	t.Helper()
	var out []*core.Delivery
	for {
		page, more, err := s.ListDeliveries(t.Context(), q)
		must(t, err)
		out = append(out, page...)
		if !more {
			return out
		}
		q.After = page[len(page)-1].ID
	}
}

func record(t *testing.T, s DeliveryStore, c core.Claim, id string, r core.AttemptResult) (*core.Delivery, *core.Delivery) {
	t.Helper()
	if r.Attempt.At.IsZero() {
		r.Attempt.At = core.Now()
	}
	stored, next, err := s.RecordAttempt(t.Context(), c, id, r)
	must(t, err)
	return stored, next
}

func ok() core.AttemptResult {
	return core.AttemptResult{Success: true, Attempt: core.Attempt{StatusCode: 204}}
}

func failed(retry time.Time) core.AttemptResult {
	return core.AttemptResult{RetryAt: retry, Attempt: core.Attempt{StatusCode: 503, Error: "unavailable"}}
}

func seqs(ds []*core.Delivery) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.Seq
	}
	return out
}

func testDestinationCreate(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	in := newDest("", core.EventFilter{Level: core.LevelProgress, Types: []string{core.TypeAgentMessage}, AgentID: "agt_a"})
	d, err := s.CreateDestination(ctx, in)
	must(t, err)
	if d.ID != in.Destination.ID || d.Status != core.DestinationActive || d.CreatedAt.IsZero() || d.Level != core.LevelProgress ||
		!slices.Equal(d.Types, []string{core.TypeAgentMessage}) || d.AgentID != "agt_a" || d.PausedAt != nil || d.FailingSince != nil {
		t.Fatalf("created = %+v", d)
	}
	got, err := s.GetDestination(ctx, d.ID)
	must(t, err)
	sameJSON(t, "get destination", got, d)
	secret, err := s.DestinationSecret(ctx, d.ID)
	must(t, err)
	if string(secret) != "sealed-secret" {
		t.Fatalf("secret = %q", secret)
	}
	_, err = s.CreateDestination(ctx, in)
	wantErr(t, err, core.ErrConflict)
	_, err = s.GetDestination(ctx, "dst_missing")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.DestinationSecret(ctx, "dst_missing")
	wantErr(t, err, core.ErrNotFound)

	all := createDest(t, s, "", core.EventFilter{})
	if all.Level != core.LevelInternal || all.Types == nil || len(all.Types) != 0 {
		t.Fatalf("defaults = %+v", all)
	}
	sess := sessionOf(t, s, "agt_a")
	mine := createDest(t, s, sess.ID, core.EventFilter{Level: core.LevelUser})
	if mine.SessionID != sess.ID {
		t.Fatalf("session destination = %+v", mine)
	}
	_, err = s.CreateDestination(ctx, newDest("ses_missing", core.EventFilter{}))
	wantErr(t, err, core.ErrNotFound)
	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	_, err = s.CreateDestination(ctx, newDest(sess.ID, core.EventFilter{}))
	wantErr(t, err, core.ErrArchived)
}

func testDestinationInvalid(t *testing.T, s DeliveryStore) {
	tests := []struct {
		name string
		edit func(*core.NewDestination)
	}{
		{"no id", func(d *core.NewDestination) { d.Destination.ID = "" }},
		{"foreign id", func(d *core.NewDestination) { d.Destination.ID = core.NewID(core.PrefixSession) }},
		{"relative url", func(d *core.NewDestination) { d.Destination.URL = "/hooks" }},
		{"ftp url", func(d *core.NewDestination) { d.Destination.URL = "ftp://example.com/" }},
		{"level", func(d *core.NewDestination) { d.Destination.Level = "loud" }},
		{"agent on a session destination", func(d *core.NewDestination) {
			d.Destination.SessionID, d.Destination.AgentID = "ses_x", "agt_x"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDest("", core.EventFilter{})
			tc.edit(&d)
			_, err := s.CreateDestination(t.Context(), d)
			wantErr(t, err, core.ErrInvalid)
		})
	}
}

func testDestinationList(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a, b := sessionOf(t, s, "agt_a"), sessionOf(t, s, "agt_b")
	var globals, forA, ofA []string
	for range 3 {
		globals = append(globals, createDest(t, s, "", core.EventFilter{}).ID)
		d := createDest(t, s, "", core.EventFilter{AgentID: "agt_a"})
		globals, forA = append(globals, d.ID), append(forA, d.ID)
		ofA = append(ofA, createDest(t, s, a.ID, core.EventFilter{}).ID)
		createDest(t, s, b.ID, core.EventFilter{})
	}
	// Lists are in id order, and ids made in one millisecond are in no
	// order of their own.
	slices.Sort(globals)
	slices.Sort(forA)
	slices.Sort(ofA)
	list := func(q core.DestinationQuery) []string {
		var out []string
		for {
			page, more, err := s.ListDestinations(ctx, q)
			must(t, err)
			for _, d := range page {
				out = append(out, d.ID)
			}
			if !more {
				return out
			}
			q.After = page[len(page)-1].ID
		}
	}
	if got := list(core.DestinationQuery{Limit: 2}); len(got) != 12 || !slices.IsSorted(got) {
		t.Fatalf("all = %v", got)
	}
	if got := list(core.DestinationQuery{Global: true, Limit: 4}); !slices.Equal(got, globals) {
		t.Fatalf("global = %v, want %v", got, globals)
	}
	if got := list(core.DestinationQuery{AgentID: "agt_a", Limit: 1}); !slices.Equal(got, forA) {
		t.Fatalf("agent = %v, want %v", got, forA)
	}
	if got := list(core.DestinationQuery{SessionID: a.ID, Limit: 2}); !slices.Equal(got, ofA) {
		t.Fatalf("session = %v, want %v", got, ofA)
	}
}

func testDestinationWithSession(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	id := core.NewID(core.PrefixSession)
	d := newDest(id, core.EventFilter{Level: core.LevelUser})
	idem := &core.Idempotency{Key: "api:sessions:k1", Hash: "h1", Answer: []byte(`{"id":"` + id + `"}`)}
	req := core.NewSession{Session: core.Session{ID: id, Agent: core.AgentRef{ID: "agt_a", Version: 1}}, Inputs: []core.Event{message("hello")}, Idempotency: idem}
	res, err := s.CreateSessionAndDestinations(ctx, req, []core.NewDestination{d})
	must(t, err)
	if !res.Created || res.Session.ID != id {
		t.Fatalf("result = %+v", res)
	}
	got, err := s.GetDestination(ctx, d.Destination.ID)
	must(t, err)
	if got.SessionID != id {
		t.Fatalf("destination = %+v", got)
	}
	// The first input enters the log later, and the destination sees it.
	appendEvents(t, s, id, core.AppendRequest{TakeInputs: true, Events: []core.Event{turnStarted()}})
	ds := claim(t, s, "a")
	if len(ds) != 1 || ds[0].EventType != core.TypeUserMessage || ds[0].Seq != 1 {
		t.Fatalf("due = %+v", ds)
	}
	// A replay creates nothing.
	again := req
	again.Session.ID = core.NewID(core.PrefixSession)
	replayed := newDest(again.Session.ID, core.EventFilter{})
	res, err = s.CreateSessionAndDestinations(ctx, again, []core.NewDestination{replayed})
	must(t, err)
	if res.Replay == nil {
		t.Fatalf("replay result = %+v", res)
	}
	_, err = s.GetDestination(ctx, replayed.Destination.ID)
	wantErr(t, err, core.ErrNotFound)
	// A destination must name the session being created.
	other := newDest("ses_other", core.EventFilter{})
	_, err = s.CreateSessionAndDestinations(ctx, core.NewSession{}, []core.NewDestination{other})
	wantErr(t, err, core.ErrInvalid)
}

func testDeliveryList(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a, b := sessionOf(t, s, "agt_a"), sessionOf(t, s, "agt_a")
	d1, d2 := createDest(t, s, "", core.EventFilter{}), createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "1", "2", "3")
	say(t, s, b.ID, "4")
	if n := len(allDeliveries(t, s, core.DeliveryQuery{Limit: 2})); n != 7 {
		t.Fatalf("%d deliveries, want 7", n)
	}
	tests := []struct {
		name string
		q    core.DeliveryQuery
		want int
	}{
		{"destination", core.DeliveryQuery{DestinationID: d1.ID, Limit: 1}, 4},
		{"session", core.DeliveryQuery{SessionID: a.ID, Limit: 2}, 6},
		{"destination and session", core.DeliveryQuery{DestinationID: d1.ID, SessionID: b.ID}, 1},
		{"pending", core.DeliveryQuery{DestinationID: d2.ID, State: core.DeliveryPending}, 3},
		{"delivered", core.DeliveryQuery{State: core.DeliveryDelivered}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := allDeliveries(t, s, tc.q)
			if len(got) != tc.want || !slices.IsSortedFunc(got, func(x, y *core.Delivery) int { return cmpID(x.ID, y.ID) }) {
				t.Fatalf("%d deliveries (sorted: %v), want %d", len(got), seqs(got), tc.want)
			}
		})
	}
	got, err := s.GetDelivery(ctx, allDeliveries(t, s, core.DeliveryQuery{})[0].ID)
	must(t, err)
	if got.State != core.DeliveryPending {
		t.Fatalf("get = %+v", got)
	}
	_, err = s.GetDelivery(ctx, "dlv_missing")
	wantErr(t, err, core.ErrNotFound)
}

func cmpID(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
