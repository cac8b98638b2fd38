package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// Kinds keep dedupe and idempotency keys in separate namespaces of
// request_keys, so a delivery id can never replay an API answer.
const (
	kindDedupe      = "d"
	kindIdempotency = "i"
)

// keysConstraint is the unique constraint a write racing another with the
// same key fails on; it is run again and finds the other's key.
const keysConstraint = "request_keys_pkey"

// checkKeys answers whether a write was already done: a non-nil replay for
// a known idempotency key with the same hash, dup for a known dedupe key.
func checkKeys(ctx context.Context, tx pgx.Tx, idem *core.Idempotency, dedupe []string) (replay []byte, dup bool, err error) {
	if idem == nil && len(dedupe) == 0 {
		return nil, false, nil
	}
	var idemKey *string
	if idem != nil {
		idemKey = &idem.Key
	}
	rows, err := tx.Query(ctx, `SELECT kind, hash, answer FROM request_keys
		WHERE (kind = 'i' AND key = $1) OR (kind = 'd' AND key = ANY($2))`, idemKey, dedupe)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, hash string
		var answer []byte
		if err := rows.Scan(&kind, &hash, &answer); err != nil {
			return nil, false, err
		}
		if kind == kindDedupe {
			dup = true
			continue
		}
		if replay, err = record.Replay(idem, hash, answer); err != nil {
			return nil, false, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if replay != nil {
		return replay, false, nil
	}
	return nil, dup, nil
}

// queueKeys queues the recording of a write's keys, in key order so two
// writes sharing keys wait on each other instead of deadlocking.
func queueKeys(b *pgx.Batch, idem *core.Idempotency, dedupe []string, now time.Time) {
	type rec struct{ kind, key, hash, answer string }
	var recs []rec
	for _, d := range dedupe {
		recs = append(recs, rec{kind: kindDedupe, key: d})
	}
	if idem != nil {
		recs = append(recs, rec{kind: kindIdempotency, key: idem.Key, hash: idem.Hash, answer: string(idem.Answer)})
	}
	if len(recs) == 0 {
		return
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.key, b.key)) })
	// A key listed twice in one request is recorded once.
	recs = slices.CompactFunc(recs, func(a, b rec) bool { return a.kind == b.kind && a.key == b.key })
	kinds, keys, hashes, answers := make([]string, len(recs)), make([]string, len(recs)), make([]string, len(recs)), make([][]byte, len(recs))
	for i, r := range recs {
		kinds[i], keys[i], hashes[i], answers[i] = r.kind, r.key, r.hash, []byte(r.answer)
	}
	b.Queue(`INSERT INTO request_keys (kind, key, created_at, hash, answer)
		SELECT kind, key, $1, hash, answer FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[]) AS u(kind, key, hash, answer)`,
		now.UnixMilli(), kinds, keys, hashes, answers)
}

// sweepBatch bounds the keys one transaction of Sweep deletes, so a large
// backlog never holds one long transaction.
const sweepBatch = 5000

// Sweep deletes idempotency and dedupe keys created before before. It then
// sweeps the console's records as SweepConsole does with the same before:
// the runtime's periodic sweep keeps expired sign-ins and old sign-in
// failures as long as keys, then deletes them.
func (s *Store) Sweep(ctx context.Context, before time.Time) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	// created_at is in milliseconds: a key is older than before when its
	// millisecond is below before rounded up to one.
	cutoff := before.Truncate(time.Millisecond)
	if cutoff.Before(before) {
		cutoff = cutoff.Add(time.Millisecond)
	}
	total, err := s.sweepRows(ctx, `DELETE FROM request_keys WHERE (kind, key) IN (
		SELECT kind, key FROM request_keys WHERE created_at < $1 LIMIT $2)`, cutoff.UnixMilli())
	if err != nil {
		return total, fmt.Errorf("sweep keys: %w", err)
	}
	if total > 0 {
		s.log.Debug("swept keys", "count", total, "before", before)
	}
	console, err := s.SweepConsole(ctx, before)
	return total + console, err
}

// sweepRows runs del, a delete of at most $2 rows older than $1 (cutoff),
// in transactions of its own until one deletes fewer than sweepBatch, and
// returns how many rows went.
func (s *Store) sweepRows(ctx context.Context, del string, cutoff any) (int, error) {
	total := 0
	for {
		var n int64
		err := s.do(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, del, cutoff, sweepBatch)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < sweepBatch {
			return total, nil
		}
	}
}
