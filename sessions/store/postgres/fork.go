package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// ForkSession makes a new session with another's log up to a turn's end
// (record.Forked), in one transaction.
func (s *Store) ForkSession(ctx context.Context, f core.Fork) (*core.Session, error) {
	f = record.PrepareFork(f)
	var out *core.Session
	err := s.write(ctx, f.Session.ID, func(tx pgx.Tx) ([]core.Change, error) {
		src, err := scanRow(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, f.From))
		if err != nil {
			return nil, err
		}
		if src == nil {
			return nil, fmt.Errorf("session %s: %w", f.From, core.ErrNotFound)
		}
		rows, err := tx.Query(ctx, `SELECT body FROM events WHERE session_id = $1 ORDER BY seq`, f.From)
		if err != nil {
			return nil, err
		}
		events, err := collect(rows, decodeEvent)
		if err != nil {
			return nil, err
		}
		forked, copied, err := record.Forked(src.sess, f, events, s.clock())
		if err != nil {
			return nil, err
		}
		r := &row{sess: forked, counts: map[core.Status]int64{forked.Status: 1}, inserted: true}
		if text, ok := record.FirstText(copied); ok {
			r.firstText = &text
		}
		bodies := encodeEvents(copied)
		seqs := make([]int64, len(copied))
		for i, e := range copied {
			seqs[i] = int64(e.Seq)
		}
		b := &pgx.Batch{}
		if err := r.save(b); err != nil {
			return nil, err
		}
		b.Queue(`INSERT INTO events (session_id, seq, body) SELECT $1, seq, body FROM unnest($2::bigint[], $3::bytea[]) AS u(seq, body)`,
			forked.ID, seqs, bodies)
		r.queueCounts(b)
		if err := sendSession(ctx, tx, b, forked.ID); err != nil {
			return nil, err
		}
		out = forked
		return []core.Change{r.change(core.Change{})}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("fork session: %w", err)
	}
	return out, nil
}
