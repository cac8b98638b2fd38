package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// Append appends to the session's log and projects the new events onto the
// session's row, in one transaction under the row's lock.
func (s *Store) Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	events, err := record.PrepareEvents(req.Events)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		// Refuse unknown and archived sessions, and skip the write when
		// there is nothing to append.
		nothing, err := s.nothingToTake(ctx, sessionID, req.TakeInputs)
		if err != nil || nothing {
			if err != nil {
				return nil, fmt.Errorf("append: %w", err)
			}
			return nil, nil
		}
	}
	var out []core.Event
	var reads appendReads
	err = s.writeTx(ctx, sessionID, txBody{
		open: func(b *pgx.Batch) { reads.queue(b, sessionID, req) },
		run: func(tx pgx.Tx, tail *pgx.Batch) ([]core.Change, error) {
			r, ch, err := s.appendTx(ctx, tx, tail, sessionID, req, events, &reads)
			out = r
			return ch, err
		},
	})
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return out, nil
}

// nothingToTake reports whether an append of no events has nothing to do:
// it takes no inputs, or none are queued.
func (s *Store) nothingToTake(ctx context.Context, sessionID string, take bool) (bool, error) {
	var v []byte
	var pending bool
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT body, EXISTS (SELECT 1 FROM pending_inputs WHERE session_id = $1)
		FROM sessions WHERE id = $1`, sessionID).Scan(&v, &pending)
	if noRow(err) {
		return false, fmt.Errorf("session %s: %w", sessionID, core.ErrNotFound)
	}
	if err != nil {
		return false, err
	}
	sess, err := decodeSession(v)
	if err != nil {
		return false, err
	}
	if sess.Status == core.StatusArchived {
		return false, fmt.Errorf("session %s: %w", sessionID, core.ErrArchived)
	}
	return !take || !pending, nil
}

// appendTx logs the events under the session's lock, taken by reads,
// and queues on tail the writes nothing in the transaction reads after.
func (s *Store) appendTx(ctx context.Context, tx pgx.Tx, tail *pgx.Batch, sessionID string, req core.AppendRequest, events []record.LogEvent, reads *appendReads) ([]core.Event, []core.Change, error) {
	r, err := reads.check(sessionID, req.Epoch)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock()
	a := record.Append(r.sess, reads.taken, events, req, now)
	if len(a.Events) == 0 {
		return nil, nil, nil // another appender took the inputs first
	}
	r.setStatus(a.Status)
	switch a.Lease {
	case record.LeaseReleased:
		r.lease = nil
	case record.LeaseTaken:
		r.lease = &req.Holder
	}
	// The deliveries' own reads and writes go first: the writes below
	// wait in tail for the commit.
	if err := s.enqueueMatching(ctx, tx, r.sess, a.Events, now, reads.dests); err != nil {
		return nil, nil, err
	}
	bodies := encodeEvents(a.Events)
	seqs := make([]int64, len(a.Events))
	for i, e := range a.Events {
		seqs[i] = int64(e.Seq)
	}
	tail.Queue(`INSERT INTO events (session_id, seq, body) SELECT $1, seq, body FROM unnest($2::bigint[], $3::bytea[]) AS u(seq, body)`,
		sessionID, seqs, bodies)
	if a.MarkSinks {
		for _, sink := range core.SinkProviders(r.sess) {
			if record.ValidSink(sink, sessionID) == nil {
				tail.Queue(`INSERT INTO sink_active (sink, session_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, sink, sessionID)
			}
		}
	}
	if len(a.Completed) > 0 {
		tail.Queue(`DELETE FROM wakes WHERE session_id = $1 AND NOT EXISTS (SELECT 1 FROM pending_inputs WHERE session_id = $1)`, sessionID)
	}
	if err := r.save(tail); err != nil {
		return nil, nil, err
	}
	// Counters last: their rows are shared, so they are held the least.
	r.queueCounts(tail)
	var stats turnStats
	for _, c := range a.Completed {
		stats.count(c.Event, c.Done)
	}
	stats.queue(tail)
	return a.Events, []core.Change{r.change(core.Change{Events: a.Events})}, nil
}

// Events returns logged events with seq > after, at most limit (0: all).
func (s *Store) Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	from := int64(min(after, math.MaxInt64)) // no seq is past it
	out, err := s.sessionRows(ctx, sessionID, `SELECT body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, from, lim)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}
