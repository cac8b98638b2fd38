package postgres

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// appendReads are what an append reads under the session's lock. They are
// queued with the transaction's BEGIN (txBody.open), so an append spends
// one round trip on them: the lock comes first in the batch, and the
// server runs the statements in order, so the others read under it.
type appendReads struct {
	row *row
	// epoch is the session's lease epoch (0 without a lease), read when
	// the append is fenced.
	epoch uint64
	// taken are the inputs the append takes, in queue order.
	taken []core.Event
	// dests are the destinations that may take a delivery, unlocked
	// (enqueueDeliveries).
	dests []*core.Destination
}

// queue queues the reads on b; their results land in a once b is sent.
func (a *appendReads) queue(b *pgx.Batch, sessionID string, req core.AppendRequest) {
	*a = appendReads{}
	b.Queue(lockSQL, sessionID).QueryRow(func(r pgx.Row) (err error) {
		a.row, err = scanRow(r)
		return err
	})
	if req.Epoch != 0 {
		b.Queue(`SELECT epoch FROM session_leases WHERE session_id = $1`, sessionID).QueryRow(func(r pgx.Row) error {
			if err := r.Scan(&a.epoch); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
	}
	if req.TakeInputs {
		// Up to and including the first interrupt, so the harness can
		// stop at it.
		b.Queue(`DELETE FROM pending_inputs WHERE session_id = $1 AND pos <= (
				SELECT coalesce(min(pos) FILTER (WHERE type = $2), max(pos)) FROM pending_inputs WHERE session_id = $1)
			RETURNING pos, body`, sessionID, core.TypeUserInterrupt).Query(func(rows pgx.Rows) (err error) {
			a.taken, err = collectTaken(rows)
			return err
		})
	}
	b.Queue(destinationsSQL, sessionID).Query(func(rows pgx.Rows) (err error) {
		a.dests, err = collect(rows, decodeDestination)
		return err
	})
}

// check refuses an append to a session that is missing or archived, or
// whose lease moved on from the append's epoch.
func (a *appendReads) check(sessionID string, epoch uint64) (*row, error) {
	r, err := writable(a.row, sessionID)
	if err != nil {
		return nil, err
	}
	return r, record.Fenced(sessionID, a.epoch, epoch)
}

// collectTaken decodes the inputs a take removed, in queue order.
func collectTaken(rows pgx.Rows) ([]core.Event, error) {
	type taken struct {
		pos int64
		ev  core.Event
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (taken, error) {
		var t taken
		var v []byte
		if err := row.Scan(&t.pos, &v); err != nil {
			return t, err
		}
		ev, err := decodeEvent(v)
		t.ev = ev
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("take inputs: %w", err)
	}
	slices.SortFunc(all, func(a, b taken) int { return cmp.Compare(a.pos, b.pos) })
	out := make([]core.Event, len(all))
	for i, t := range all {
		out[i] = t.ev
	}
	return out, nil
}
