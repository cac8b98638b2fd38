package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

func decodeDestination(body []byte) (*core.Destination, error) {
	return record.Decode[core.Destination]("destination", body)
}

// loadDelivery reads a delivery, taking lock ("" or a lock constant).
func loadDelivery(ctx context.Context, q querier, id, lock string) (*core.Delivery, error) {
	ds, err := queryDeliveries(ctx, q, "SELECT body FROM deliveries WHERE id = $1"+lock, id)
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("delivery %s: %w", id, core.ErrNotFound)
	}
	return ds[0], nil
}

// queryDeliveries decodes the deliveries whose bodies sql selects.
func queryDeliveries(ctx context.Context, q querier, sql string, args ...any) ([]*core.Delivery, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	out, err := collect(rows, record.DecodeDelivery)
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	return out, nil
}

// saveDeliveries rewrites deliveries whose rows tx has locked.
func saveDeliveries(ctx context.Context, tx pgx.Tx, ds ...*core.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids, states, bodies := make([]string, len(ds)), make([]string, len(ds)), make([][]byte, len(ds))
	for i, d := range ds {
		ids[i], states[i], bodies[i] = d.ID, string(d.State), record.EncodeDelivery(d)
	}
	_, err := tx.Exec(ctx, `UPDATE deliveries d SET state = u.state, body = u.body
		FROM unnest($1::text[], $2::text[], $3::bytea[]) AS u(id, state, body) WHERE d.id = u.id`, ids, states, bodies)
	if err != nil {
		return fmt.Errorf("save deliveries: %w", err)
	}
	return nil
}

// enqueueDeliveries queues, in the append's transaction, a delivery of
// each event to every destination it passes: the log and the queue commit
// together, so a crash neither loses nor invents one. The destinations
// that take a delivery are locked FOR SHARE, so none is deleted, paused or
// resumed under the append.
func (s *Store) enqueueDeliveries(ctx context.Context, tx pgx.Tx, sess *core.Session, events []core.Event, now core.Time) error {
	rows, err := tx.Query(ctx, destinationsSQL, sess.ID)
	if err != nil {
		return fmt.Errorf("read destinations: %w", err)
	}
	all, err := collect(rows, decodeDestination)
	if err != nil {
		return fmt.Errorf("read destinations: %w", err)
	}
	return s.enqueueMatching(ctx, tx, sess, events, now, all)
}

// destinationsSQL reads the destinations of a session ($1): the global
// ones and its own, in id order.
const destinationsSQL = "SELECT body FROM destinations WHERE (session_id IS NULL OR session_id = $1) ORDER BY id"

// enqueueMatching is enqueueDeliveries with the session's destinations
// read already, unlocked.
func (s *Store) enqueueMatching(ctx context.Context, tx pgx.Tx, sess *core.Session, events []core.Event, now core.Time, all []*core.Destination) error {
	candidates := passed(all, sess, events)
	if len(candidates) == 0 {
		return nil
	}
	// Read again under the lock: one deleted meanwhile takes nothing.
	dests, err := matchingDestinations(ctx, tx, sess, events, lockShare, destIDsOf(candidates))
	if err != nil || len(dests) == 0 {
		return err
	}
	n := 0
	for _, e := range events {
		for _, d := range dests {
			if d.Filter().Match(sess.Agent.ID, e) {
				n++
			}
		}
	}
	rows, err := tx.Query(ctx, "SELECT nextval('delivery_ids') FROM generate_series(1, $1)", n)
	if err != nil {
		return fmt.Errorf("number deliveries: %w", err)
	}
	nums, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("number deliveries: %w", err)
	}
	slices.Sort(nums)
	var ids, destIDs, states []string
	var seqs []int64
	var bodies [][]byte
	for _, e := range events {
		for _, dest := range dests {
			if !dest.Filter().Match(sess.Agent.ID, e) {
				continue
			}
			d := record.NewDelivery(dest.ID, sess, e, uint64(nums[len(ids)]), now)
			ids, destIDs, states, seqs, bodies = append(ids, d.ID), append(destIDs, d.DestinationID), append(states, string(d.State)), append(seqs, int64(d.Seq)), append(bodies, record.EncodeDelivery(d))
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO deliveries (id, destination_id, session_id, seq, state, body)
		SELECT u.id, u.destination_id, $1, u.seq, u.state, u.body
		FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::bytea[]) AS u(id, destination_id, seq, state, body)`,
		sess.ID, ids, destIDs, seqs, states, bodies)
	if err != nil {
		return fmt.Errorf("insert deliveries: %w", err)
	}
	// A stream already scheduled keeps its time: its head may be waiting
	// out a backoff, and these are behind it. A paused destination's
	// stream is queued but not due.
	streamDests, dues := []string{}, []*int64{}
	at := now.UnixMilli()
	for _, dest := range dests {
		if !slices.Contains(destIDs, dest.ID) {
			continue
		}
		var due *int64
		if dest.Status == core.DestinationActive {
			due = &at
		}
		streamDests, dues = append(streamDests, dest.ID), append(dues, due)
	}
	_, err = tx.Exec(ctx, `INSERT INTO delivery_streams (destination_id, session_id, due_at)
		SELECT u.destination_id, $1, u.due_at FROM unnest($2::text[], $3::bigint[]) AS u(destination_id, due_at)
		ON CONFLICT (destination_id, session_id) DO UPDATE SET due_at = COALESCE(delivery_streams.due_at, EXCLUDED.due_at)`,
		sess.ID, streamDests, dues)
	if err != nil {
		return fmt.Errorf("queue streams: %w", err)
	}
	return nil
}

// matchingDestinations returns, in id order, the destinations of only
// that at least one of events passes, taking lock on them.
func matchingDestinations(ctx context.Context, tx pgx.Tx, sess *core.Session, events []core.Event, lock string, only []string) ([]*core.Destination, error) {
	rows, err := tx.Query(ctx, "SELECT body FROM destinations WHERE id = ANY($1) ORDER BY id"+lock, only)
	if err != nil {
		return nil, fmt.Errorf("read destinations: %w", err)
	}
	all, err := collect(rows, decodeDestination)
	if err != nil {
		return nil, fmt.Errorf("read destinations: %w", err)
	}
	return passed(all, sess, events), nil
}

// passed keeps the destinations that at least one of events passes.
func passed(dests []*core.Destination, sess *core.Session, events []core.Event) []*core.Destination {
	var out []*core.Destination
	for _, d := range dests {
		f := d.Filter()
		if slices.ContainsFunc(events, func(e core.Event) bool { return f.Match(sess.Agent.ID, e) }) {
			out = append(out, d)
		}
	}
	return out
}

func destIDsOf(ds []*core.Destination) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// GetDelivery returns a delivery with its attempts.
func (s *Store) GetDelivery(ctx context.Context, id string) (*core.Delivery, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	d, err := loadDelivery(ctx, s.poolFor(ctx), id, "")
	if err != nil {
		return nil, fmt.Errorf("get delivery: %w", err)
	}
	return d, nil
}

// ListDeliveries pages through deliveries in id order. A destination or
// session filter reads that index; the state filter is checked on the rows
// it reads.
func (s *Store) ListDeliveries(ctx context.Context, q core.DeliveryQuery) ([]*core.Delivery, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	w := sqlConds{args: []any{q.After}}
	if q.DestinationID != "" {
		w.add("destination_id = ?", q.DestinationID)
	}
	if q.SessionID != "" {
		w.add("session_id = ?", q.SessionID)
	}
	if q.State != "" {
		w.add("state = ?", string(q.State))
	}
	out, more, err := listPage(ctx, s, w.pageSQL("deliveries"), w.args, q.Limit, record.DecodeDelivery)
	if err != nil {
		return nil, false, fmt.Errorf("list deliveries: %w", err)
	}
	return out, more, nil
}

// sqlConds builds a list's query: the cursor is $1 (args[0]), each
// condition's "?" becomes its argument's placeholder, and the limit
// listPage adds comes last.
type sqlConds struct {
	conds []string
	args  []any
}

func (w *sqlConds) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// pageSQL selects the bodies of a table's records after the cursor, in id
// order.
func (w *sqlConds) pageSQL(table string) string {
	sql := "SELECT body FROM " + table + " WHERE id > $1"
	for _, c := range w.conds {
		sql += " AND " + c
	}
	return sql + " ORDER BY id LIMIT $" + strconv.Itoa(len(w.args)+1)
}

// Redeliver puts a delivered or dead delivery back in its stream at its
// seq, pending and due at once (behind any earlier delivery of the stream
// still pending, so the stream stays in order).
func (s *Store) Redeliver(ctx context.Context, id string) (*core.Delivery, error) {
	var out *core.Delivery
	err := s.do(ctx, func(tx pgx.Tx) error {
		out = nil
		d, err := loadDelivery(ctx, tx, id, "")
		if err != nil {
			return err
		}
		if d.State == core.DeliveryPending {
			return fmt.Errorf("delivery %s is pending already: %w", id, core.ErrConflict)
		}
		dest, err := loadDestination(ctx, tx, d.DestinationID, lockShare)
		if errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("delivery %s: its destination %s was deleted: %w", id, d.DestinationID, core.ErrConflict)
		}
		if err != nil {
			return err
		}
		if err := lockStream(ctx, tx, d.Stream()); err != nil {
			return err
		}
		if d, err = loadDelivery(ctx, tx, id, lockExclusive); err != nil {
			return err
		}
		if err := record.Redeliver(d, s.clock()); err != nil {
			return err
		}
		if err := saveDeliveries(ctx, tx, d); err != nil {
			return err
		}
		if _, err := s.schedule(ctx, tx, dest, d.SessionID); err != nil {
			return err
		}
		out = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	return out, nil
}
