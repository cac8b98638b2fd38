package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

var _ core.SinkStore = (*Store)(nil)

// SinkPosition returns a sink's position in a session's log; zero when
// none was saved.
func (s *Store) SinkPosition(ctx context.Context, sink, sessionID string) (core.SinkPosition, error) {
	var p core.SinkPosition
	if err := ctxErr(ctx); err != nil {
		return p, err
	}
	if err := record.ValidSink(sink, sessionID); err != nil {
		return p, err
	}
	var v []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT body FROM sink_positions WHERE sink = $1 AND session_id = $2`, sink, sessionID).Scan(&v)
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		p, err = record.DecodeSinkPosition(v)
	}
	if err != nil {
		return core.SinkPosition{}, fmt.Errorf("sink position: %w", err)
	}
	return p, nil
}

// SaveSinkPosition stores a sink's position for the holder of claim c,
// durable before it returns.
func (s *Store) SaveSinkPosition(ctx context.Context, sink, sessionID string, c core.Claim, p core.SinkPosition) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	v, err := record.EncodeSinkPosition(sink, sessionID, p)
	if err != nil {
		return err
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		if err := checkSinkClaim(ctx, tx, sink, sessionID, c); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO sink_positions (sink, session_id, body) VALUES ($1, $2, $3)
			ON CONFLICT (sink, session_id) DO UPDATE SET body = excluded.body`, sink, sessionID, v)
		return err
	})
	if err != nil {
		return fmt.Errorf("save sink position: %w", err)
	}
	return nil
}

// ReleaseSink unmarks a session the sink has rendered up to rendered,
// unless something was logged after it. The session's row is locked
// (shared) first, so no append slips in between the check and the delete.
func (s *Store) ReleaseSink(ctx context.Context, sink, sessionID string, rendered uint64) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := record.ValidSink(sink, sessionID); err != nil {
		return false, err
	}
	released := false
	err := s.do(ctx, func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE id = $1 FOR SHARE`, sessionID).Scan(&last)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			last = 0 // a session that does not exist has nothing left to render
		case err != nil:
			return err
		}
		if uint64(last) > rendered {
			// Still behind, unless it was never marked.
			var marked bool
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sink_active WHERE sink = $1 AND session_id = $2)`, sink, sessionID).Scan(&marked)
			released = !marked
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM sink_active WHERE sink = $1 AND session_id = $2`, sink, sessionID)
		released = true
		return err
	})
	if err != nil {
		return false, fmt.Errorf("release sink: %w", err)
	}
	return released, nil
}

// ActiveSinkSessions lists the sessions a sink is marked active on, in id
// order.
func (s *Store) ActiveSinkSessions(ctx context.Context, sink string) ([]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if strings.ContainsRune(sink, 0) {
		return []string{}, nil // no sink has such a name
	}
	out, err := s.ids(ctx, `SELECT session_id FROM sink_active WHERE sink = $1 ORDER BY session_id`, sink)
	if err != nil {
		return nil, fmt.Errorf("active sink sessions: %w", err)
	}
	return out, nil
}
