package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// queue queues inputs at the end of the session's pending inputs, marks
// the session queued unless a turn is running, and schedules a wake now.
// It stamps copies of inputs, so a transaction run again starts over.
func (r *row) queue(b *pgx.Batch, inputs []core.Event, now core.Time) ([]core.Event, error) {
	out, status := record.Queue(r.sess, inputs, now)
	types := make([]string, len(out))
	for i, e := range out {
		types[i] = e.Type
	}
	if text, ok := record.FirstText(out); ok && r.firstText == nil {
		r.firstText = &text
	}
	bodies := encodeEvents(out)
	// The positions follow the session's last one; the session's lock
	// keeps anyone else from queueing meanwhile.
	b.Queue(`INSERT INTO pending_inputs (session_id, pos, type, body)
		SELECT $1, coalesce((SELECT max(pos) FROM pending_inputs WHERE session_id = $1), 0) + ord, type, body
		FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS u(type, body, ord)`, r.sess.ID, types, bodies)
	r.setStatus(status)
	queueWake(b, r.sess.ID, now.Time, false)
	return out, nil
}

// QueueInputs durably queues inputs on an existing session.
func (s *Store) QueueInputs(ctx context.Context, sessionID string, req core.QueueRequest) (*core.QueueResult, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	inputs, err := record.PrepareQueue(req)
	if err != nil {
		return nil, err
	}
	var res *core.QueueResult
	err = retryKeys(func() error {
		return s.write(ctx, sessionID, func(tx pgx.Tx) ([]core.Change, error) {
			r, ch, err := s.queueInputs(ctx, tx, sessionID, req, inputs)
			res = r
			return ch, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("queue inputs: %w", err)
	}
	return res, nil
}

// maxKeyAttempts bounds how often a write that lost a race on a key (or an
// external key) is run again.
const maxKeyAttempts = 8

// retryKeys runs write again while it fails because a write racing it
// recorded one of its keys first: run again, it finds that write's key
// (a duplicate, a replay, or the session the other created).
func retryKeys(write func() error) error {
	for attempt := 1; ; attempt++ {
		err := write()
		var stripe *errStripe
		again := isUnique(err, keysConstraint) || isUnique(err, externalKeyConstraint) || errors.As(err, &stripe)
		if !again || attempt == maxKeyAttempts {
			return err
		}
	}
}

func (s *Store) queueInputs(ctx context.Context, tx pgx.Tx, sessionID string, req core.QueueRequest, inputs []core.Event) (*core.QueueResult, []core.Change, error) {
	r, err := lockRow(ctx, tx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	replay, dup, err := checkKeys(ctx, tx, req.Idempotency, req.Dedupe)
	if err != nil {
		return nil, nil, err
	}
	if replay != nil || dup {
		res := &core.QueueResult{Duplicate: dup, Replay: replay}
		if r != nil {
			res.Session = r.sess // informative only
		}
		return res, nil, nil
	}
	switch {
	case r == nil:
		return nil, nil, fmt.Errorf("session %s: %w", sessionID, core.ErrNotFound)
	case r.sess.Status == core.StatusArchived:
		return nil, nil, fmt.Errorf("session %s: %w", sessionID, core.ErrArchived)
	}
	if req.AnswersPending {
		if err := record.AnswersPending(r.sess, req.Inputs); err != nil {
			return nil, nil, err
		}
	}
	now := s.clock()
	b := &pgx.Batch{}
	queued, err := r.queue(b, inputs, now)
	if err != nil {
		return nil, nil, err
	}
	queueKeys(b, req.Idempotency, req.Dedupe, now.Time)
	if err := r.save(b); err != nil {
		return nil, nil, err
	}
	r.queueCounts(b)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, err
	}
	return &core.QueueResult{Session: r.sess, Inputs: queued}, []core.Change{r.change(core.Change{Queued: queued})}, nil
}

// Pending returns the queued inputs not yet in the log, in queue order.
func (s *Store) Pending(ctx context.Context, sessionID string) ([]core.Event, error) {
	out, err := s.sessionRows(ctx, sessionID, `SELECT body FROM pending_inputs WHERE session_id = $1 ORDER BY pos`)
	if err != nil {
		return nil, fmt.Errorf("pending inputs: %w", err)
	}
	return out, nil
}

// sessionRows reads events of a session with sql (its id is $1); none
// from a session that does not exist is ErrNotFound.
func (s *Store) sessionRows(ctx context.Context, sessionID, sql string, args ...any) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, sql, append([]any{sessionID}, args...)...)
	var out []core.Event
	if err == nil {
		out, err = collect(rows, decodeEvent)
	}
	if noRow(err) {
		return nil, fmt.Errorf("session %s: %w", sessionID, core.ErrNotFound)
	}
	if err != nil || len(out) > 0 {
		return out, err
	}
	// Only an empty answer needs the session's existence checked.
	if _, err := loadSession(ctx, s.poolFor(ctx), sessionID); err != nil {
		return nil, err
	}
	return out, nil
}
