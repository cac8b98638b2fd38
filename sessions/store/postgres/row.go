package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// row is a session read under its row's lock by a write, with what the
// write changes beside the record.
type row struct {
	sess *core.Session
	// lease is lease_holder: who holds the open turn, nil when none.
	lease *string
	// before is the status the write found ("" for a new session).
	before core.Status
	// counts are the moves of session_counts the write makes.
	counts map[core.Status]int64
	// inserted: the session is new, its row not written yet.
	inserted bool
	// key is a new session's external key ("" for none).
	key string
	// firstText is what record.FirstText keeps of the inputs this write
	// queues; the row keeps the first one it is given.
	firstText *string
}

func decodeSession(v []byte) (*core.Session, error) { return record.Decode[core.Session]("session", v) }

// sessionColumns are what a row is read from.
const sessionColumns = `body, lease_holder`

// scanRow reads a session row; nil without a row.
func scanRow(r pgx.Row) (*row, error) {
	var v []byte
	var lease *string
	err := r.Scan(&v, &lease)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sess, err := decodeSession(v)
	if err != nil {
		return nil, err
	}
	return &row{sess: sess, lease: lease, before: sess.Status, counts: map[core.Status]int64{}}, nil
}

// lockSQL reads a session's row under its lock.
const lockSQL = `SELECT ` + sessionColumns + ` FROM sessions WHERE id = $1 FOR UPDATE`

// lockRow locks the session's row for a write; nil when there is none.
// Every write of a session takes this lock first, which orders them.
func lockRow(ctx context.Context, tx pgx.Tx, id string) (*row, error) {
	return scanRow(tx.QueryRow(ctx, lockSQL, id))
}

// lockWritable locks a session that may still change.
func lockWritable(ctx context.Context, tx pgx.Tx, id string) (*row, error) {
	r, err := lockRow(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	return writable(r, id)
}

// writable refuses a locked row that is missing (nil) or archived.
func writable(r *row, id string) (*row, error) {
	if r == nil {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	if r.sess.Status == core.StatusArchived {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrArchived)
	}
	return r, nil
}

// loadSession reads a session without a lock.
func loadSession(ctx context.Context, q querier, id string) (*core.Session, error) {
	var v []byte
	err := q.QueryRow(ctx, `SELECT body FROM sessions WHERE id = $1`, id).Scan(&v)
	if noRow(err) {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeSession(v)
}

// setStatus changes the status and moves the counts with it.
func (r *row) setStatus(st core.Status) {
	if r.sess.Status == st {
		return
	}
	r.counts[r.sess.Status]--
	r.counts[st]++
	r.sess.Status = st
}

// save queues the write of the session's row (its insert, for a new one).
func (r *row) save(b *pgx.Batch) error {
	v, err := record.EncodeSession(r.sess)
	if err != nil {
		return err
	}
	s := r.sess
	if r.inserted {
		var key *string
		if r.key != "" {
			key = &r.key
		}
		var tenant *string
		if s.Tenant != "" {
			tenant = &s.Tenant
		}
		b.Queue(`INSERT INTO sessions (id, status, agent_id, external_key, last_seq, lease_holder, body, provider, tenant, first_text)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, s.ID, string(s.Status), s.Agent.ID, key, int64(s.LastSeq), r.lease, v,
			s.Provider(), tenant, r.firstText)
		return nil
	}
	if r.firstText != nil {
		b.Queue(`UPDATE sessions SET status = $2, last_seq = $3, lease_holder = $4, body = $5, first_text = coalesce(first_text, $6) WHERE id = $1`,
			s.ID, string(s.Status), int64(s.LastSeq), r.lease, v, *r.firstText)
		return nil
	}
	b.Queue(`UPDATE sessions SET status = $2, last_seq = $3, lease_holder = $4, body = $5 WHERE id = $1`,
		s.ID, string(s.Status), int64(s.LastSeq), r.lease, v)
	return nil
}

// countShards spreads each status's count over this many rows.
const countShards = 8

// countShard is the shard a session always counts in.
func countShard(id string) int16 { return int16(crc32.ChecksumIEEE([]byte(id)) % countShards) }

// queueCounts queues the moves of session_counts, in status order so two
// writes lock the counter rows they share in the same order.
func (r *row) queueCounts(b *pgx.Batch) {
	var statuses []string
	var deltas []int64
	for st, n := range r.counts {
		if n != 0 {
			statuses = append(statuses, string(st))
		}
	}
	if len(statuses) == 0 {
		return
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		deltas = append(deltas, r.counts[core.Status(st)])
	}
	shard := countShard(r.sess.ID)
	b.Queue(`INSERT INTO session_counts (status, shard, n)
		SELECT st, $1, n FROM unnest($2::text[], $3::bigint[]) AS u(st, n) ORDER BY st
		ON CONFLICT (status, shard) DO UPDATE SET n = session_counts.n + excluded.n`, shard, statuses, deltas)
}

// change is what the write did to the session, for the commit stream.
func (r *row) change(c core.Change) core.Change {
	c.SessionID = r.sess.ID
	if r.sess.Origin != nil {
		c.Provider = r.sess.Origin.Provider
	}
	c.Sinks = core.SinkProviders(r.sess)
	if r.sess.Status != r.before {
		c.Status = r.sess.Status
	}
	return c
}
