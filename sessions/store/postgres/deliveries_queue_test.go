package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// queueFixture drives the queue through enqueueDeliveries, as Append does,
// with sessions that exist only in the events it passes.
type queueFixture struct {
	t    *testing.T
	s    *Store
	seqs map[string]uint64
}

func newQueueFixture(t *testing.T) *queueFixture {
	s, _ := openTest(t, Options{})
	return &queueFixture{t: t, s: s, seqs: map[string]uint64{}}
}

// globalDest creates a global destination that takes every event.
func (f *queueFixture) globalDest() *core.Destination {
	f.t.Helper()
	d, err := f.s.CreateDestination(f.t.Context(), core.NewDestination{Destination: core.Destination{
		ID: core.NewID(core.PrefixDestination), URL: "https://hooks.example.com/in",
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// events logs n messages of a session and returns them.
func (f *queueFixture) events(sessionID string, n int) []core.Event {
	evs := make([]core.Event, n)
	for i := range evs {
		f.seqs[sessionID]++
		evs[i] = core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "x"})
		evs[i].Seq = f.seqs[sessionID]
	}
	return evs
}

// enqueue runs enqueueDeliveries in tx, as Append does.
func (f *queueFixture) enqueue(ctx context.Context, tx pgx.Tx, sessionID string, n int) error {
	sess := &core.Session{ID: sessionID, Agent: core.AgentRef{ID: "agt_a", Version: 1}}
	return f.s.enqueueDeliveries(ctx, tx, sess, f.events(sessionID, n), f.s.clock())
}

func (f *queueFixture) append(sessionID string, n int) {
	f.t.Helper()
	if err := f.s.do(f.t.Context(), func(tx pgx.Tx) error { return f.enqueue(f.t.Context(), tx, sessionID, n) }); err != nil {
		f.t.Fatal(err)
	}
}

func (f *queueFixture) streamRows() int {
	f.t.Helper()
	var n int
	if err := f.s.pool.QueryRow(f.t.Context(), "SELECT count(*) FROM delivery_streams").Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestClaimPassesOverClaimedStreams: the due streams behind more claimed
// ones than a claim asks for are still found, and next names the first
// one not returned.
func TestClaimPassesOverClaimedStreams(t *testing.T) {
	f := newQueueFixture(t)
	ctx := t.Context()
	f.globalDest()
	const claimed = 80
	for i := range claimed + 2 {
		f.append("ses_"+string(rune('A'+i/26))+string(rune('a'+i%26)), 1)
	}
	now := time.Now().Add(time.Second)
	heads, _, err := f.s.ClaimDeliveries(ctx, "run_a", time.Hour, now, claimed)
	if err != nil || len(heads) != claimed {
		t.Fatalf("a claimed %d, %v", len(heads), err)
	}
	due, next, err := f.s.ClaimDeliveries(ctx, "run_b", time.Hour, now, 1)
	if err != nil || len(due) != 1 || due[0].SessionID != "ses_Dc" {
		t.Fatalf("b claimed %+v, %v; want the stream of ses_Dc", due, err)
	}
	last, _, err := f.s.ListDeliveries(ctx, core.DeliveryQuery{SessionID: "ses_Dd"})
	if err != nil || len(last) != 1 {
		t.Fatalf("deliveries of ses_Dd: %+v, %v", last, err)
	}
	if !next.Equal(last[0].NextAttemptAt.Time) {
		t.Fatalf("next = %v, want %v", next, last[0].NextAttemptAt)
	}
}

// TestStreamRowsFollowTheQueue: a stream keeps a row while it has pending
// deliveries (not due while paused) and loses it once drained.
func TestStreamRowsFollowTheQueue(t *testing.T) {
	f := newQueueFixture(t)
	ctx := t.Context()
	dest := f.globalDest()
	f.append("ses_a", 2)
	f.append("ses_b", 1)
	if n := f.streamRows(); n != 2 {
		t.Fatalf("%d stream rows, want 2", n)
	}
	due, _, err := f.s.ClaimDeliveries(ctx, "run_a", time.Hour, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("due = %+v, %v", due, err)
	}
	claimedOther := due[1]
	r := core.AttemptResult{Attempt: core.Attempt{At: core.Now()}, RetryAt: time.Now().Add(-time.Second), PauseAfter: time.Nanosecond}
	if _, _, err := f.s.RecordAttempt(ctx, due[0].Claim, due[0].ID, r); err != nil {
		t.Fatal(err)
	}
	r.Attempt.At = core.NewTime(time.Now().Add(time.Second))
	if _, _, err := f.s.RecordAttempt(ctx, due[0].Claim, due[0].ID, r); err != nil {
		t.Fatal(err)
	}
	var scheduled int
	if err := f.s.pool.QueryRow(ctx, "SELECT count(*) FROM delivery_streams WHERE due_at IS NOT NULL").Scan(&scheduled); err != nil {
		t.Fatal(err)
	}
	if n := f.streamRows(); n != 2 || scheduled != 0 {
		t.Fatalf("paused: %d stream rows, %d scheduled; want 2, 0", n, scheduled)
	}
	if _, err := f.s.ResumeDestination(ctx, dest.ID); err != nil {
		t.Fatal(err)
	}
	// The claim on the other stream is still live: it is drained under it.
	due, _, err = f.s.ClaimDeliveries(ctx, "run_a", time.Hour, time.Now().Add(2*time.Hour), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due after the resume = %+v, %v", due, err)
	}
	due = append(due, claimedOther)
	for _, c := range due {
		for d := c.Delivery; d != nil; {
			if _, d, err = f.s.RecordAttempt(ctx, c.Claim, d.ID, core.AttemptResult{Success: true, Attempt: core.Attempt{At: core.Now()}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := f.streamRows(); n != 0 {
		t.Fatalf("%d stream rows after draining", n)
	}
}

// TestDeliveryIDsFollowEnqueueOrder: ids sort as the deliveries were
// queued, across appends and within one.
func TestDeliveryIDsFollowEnqueueOrder(t *testing.T) {
	f := newQueueFixture(t)
	f.globalDest()
	f.globalDest()
	for range 3 {
		f.append("ses_a", 4)
	}
	ds, _, err := f.s.ListDeliveries(t.Context(), core.DeliveryQuery{SessionID: "ses_a"})
	if err != nil || len(ds) != 24 {
		t.Fatalf("list = %d, %v", len(ds), err)
	}
	if !slices.IsSortedFunc(ds, func(a, b *core.Delivery) int { return int(a.Seq) - int(b.Seq) }) {
		t.Fatalf("ids out of seq order: %v", deliverySeqs(ds))
	}
}

func deliverySeqs(ds []*core.Delivery) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.Seq
	}
	return out
}

// TestDeleteDestinationWaitsForAppend: a delete that starts while an
// append is queueing a delivery to the destination waits for it, so the
// delivery ends dead rather than pending on a destination that is gone.
func TestDeleteDestinationWaitsForAppend(t *testing.T) {
	f := newQueueFixture(t)
	ctx := t.Context()
	dest := f.globalDest()
	tx, err := f.s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if err := f.enqueue(ctx, tx, "ses_a", 1); err != nil {
		t.Fatal(err)
	}
	deleted := make(chan error, 1)
	go func() { deleted <- f.s.DeleteDestination(ctx, dest.ID) }()
	waitForBlocked(t, f.s, tx.Conn().PgConn().PID(), deleted)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	ds, _, err := f.s.ListDeliveries(ctx, core.DeliveryQuery{DestinationID: dest.ID})
	if err != nil || len(ds) != 1 || ds[0].State != core.DeliveryDead {
		t.Fatalf("deliveries = %+v, %v; want one dead", ds, err)
	}
	if n := f.streamRows(); n != 0 {
		t.Fatalf("%d stream rows of a deleted destination", n)
	}
}

// waitForBlocked returns once a backend waits on a lock the backend pid
// holds, and fails the test if done reports first.
func waitForBlocked(t *testing.T, s *Store, pid uint32, done <-chan error) {
	t.Helper()
	for {
		select {
		case err := <-done:
			t.Fatalf("finished without waiting (err %v)", err)
		default:
		}
		var n int
		err := s.pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", int32(pid)).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if _, err := s.pool.Exec(t.Context(), "SELECT pg_sleep(0.01)"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClaimQueriesUseTheirIndexes: claiming reads the due index in order
// and each stream's head from the queue index, and the wait for the next
// reads the due and claims indexes, whatever the table's size (seq scans
// are off, so a plan without the index shows it cannot use it).
func TestClaimQueriesUseTheirIndexes(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	tests := []struct {
		name, sql string
		args      []any
		indexes   []string
	}{
		{"claim", claimSQL, []any{int64(0), 10, "run_a", int64(1000)}, []string{"delivery_streams_due", "deliveries_queue"}},
		{"next", nextSQL, []any{int64(0), "run_a"}, []string{"delivery_streams_due", "delivery_streams_claims"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(ctx, "EXPLAIN "+tc.sql, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(lines, "\n")
			for _, idx := range tc.indexes {
				if !strings.Contains(plan, idx) || strings.Contains(plan, "Seq Scan") {
					t.Fatalf("plan does not read %s:\n%s", idx, plan)
				}
			}
		})
	}
}

// TestAttemptSeesTheAppendItWaitedFor: an attempt that empties its stream
// while an append is queueing behind it waits for the append and hands
// on the new delivery, rather than dropping the stream under it.
func TestAttemptSeesTheAppendItWaitedFor(t *testing.T) {
	f := newQueueFixture(t)
	ctx := t.Context()
	f.globalDest()
	f.append("ses_a", 1)
	due, _, err := f.s.ClaimDeliveries(ctx, "run_a", time.Hour, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due = %+v, %v", due, err)
	}
	tx, err := f.s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if err := f.enqueue(ctx, tx, "ses_a", 1); err != nil {
		t.Fatal(err)
	}
	type result struct {
		next *core.Delivery
		err  error
	}
	recorded := make(chan result, 1)
	go func() {
		_, next, err := f.s.RecordAttempt(ctx, due[0].Claim, due[0].ID, core.AttemptResult{Success: true, Attempt: core.Attempt{At: core.Now()}})
		recorded <- result{next, err}
	}()
	done := make(chan error, 1)
	go func() {
		r := <-recorded
		recorded <- r
		done <- r.err
	}()
	waitForBlocked(t, f.s, tx.Conn().PgConn().PID(), done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-recorded
	if r.err != nil || r.next == nil || r.next.Seq != 2 {
		t.Fatalf("next = %+v, %v; want the appended delivery", r.next, r.err)
	}
	if n := f.streamRows(); n != 1 {
		t.Fatalf("%d stream rows, want the stream kept", n)
	}
}
