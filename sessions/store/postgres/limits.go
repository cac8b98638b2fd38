package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// SetSessionLimits merges l into the session's own limits; a turn a
// session budget paused is queued to run again (record.SetLimits).
func (s *Store) SetSessionLimits(ctx context.Context, sessionID string, l core.Limits, actor core.Actor) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var out *core.Session
	var reads appendReads
	err := s.writeTx(ctx, sessionID, txBody{
		open: func(b *pgx.Batch) { reads.queue(b, sessionID, core.AppendRequest{}) },
		run: func(tx pgx.Tx, tail *pgx.Batch) ([]core.Change, error) {
			r, err := reads.check(sessionID, 0)
			if err != nil {
				return nil, err
			}
			resume, err := record.SetLimits(r.sess, l, actor)
			if err != nil {
				return nil, err
			}
			out = r.sess
			if resume == nil {
				r.sess.UpdatedAt = s.clock()
				if err := r.save(tail); err != nil {
					return nil, err
				}
				return []core.Change{r.change(core.Change{})}, nil
			}
			_, changes, err := s.appendTx(ctx, tx, tail, sessionID, core.AppendRequest{}, resume, &reads)
			if err != nil {
				return nil, err
			}
			queueWake(tail, sessionID, s.clock().Time, false)
			return changes, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("set session limits: %w", err)
	}
	return out, nil
}
