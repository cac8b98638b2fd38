package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	bolt "go.etcd.io/bbolt"
)

// normalizeBody compacts a body so that what is returned equals what is
// stored; an empty body becomes {}.
func normalizeBody(b json.RawMessage) (json.RawMessage, error) {
	if len(b) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("event body is not json: %v: %w", err, core.ErrInvalid)
	}
	return buf.Bytes(), nil
}

// normalizeTimes truncates caller-supplied times to the stored precision.
func normalizeTimes(e *core.Event) {
	if !e.CreatedAt.IsZero() {
		e.CreatedAt = core.NewTime(e.CreatedAt.Time)
	}
	if e.QueuedAt != nil {
		e.QueuedAt = core.NewTime(e.QueuedAt.Time).Ptr()
	}
	if e.ProcessedAt != nil {
		e.ProcessedAt = core.NewTime(e.ProcessedAt.Time).Ptr()
	}
}

// prepareInputs validates inputs and fixes their ids before any batch, so
// a bad request fails alone and a re-run batch assigns the same ids.
func prepareInputs(in []core.Event) ([]core.Event, error) {
	out := make([]core.Event, len(in))
	for i, e := range in {
		if !core.IsInput(e.Type) {
			return nil, fmt.Errorf("input %d: type %q is not an input type: %w", i, e.Type, core.ErrInvalid)
		}
		body, err := normalizeBody(e.Body)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		e.Body = body
		if e.ID == "" {
			e.ID = core.NewID(core.PrefixEvent)
		}
		e.Seq = 0
		normalizeTimes(&e)
		out[i] = e
	}
	return out, nil
}

// queue stores inputs in the session's pending area in order, marks the
// session queued unless a turn is running, and schedules a wake now. It
// works on a copy of inputs so a re-run batch starts from the same state.
func (s *Store) queue(tx *bolt.Tx, sess *core.Session, inputs []core.Event, now core.Time) ([]core.Event, error) {
	pending, err := bkt(tx, bucketPending).CreateBucketIfNotExists([]byte(sess.ID))
	if err != nil {
		return nil, fmt.Errorf("pending area of %s: %w", sess.ID, err)
	}
	out := make([]core.Event, len(inputs))
	for i, e := range inputs {
		e.SessionID = sess.ID
		if e.QueuedAt == nil {
			e.QueuedAt = now.Ptr()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		v, err := core.EncodeJSON(&e)
		if err != nil {
			return nil, fmt.Errorf("encode input %s: %w", e.ID, err)
		}
		pos, err := pending.NextSequence()
		if err != nil {
			return nil, err
		}
		if err := pending.Put(u64(pos), v); err != nil {
			return nil, err
		}
		out[i] = e
	}
	if sess.Status != core.StatusRunning {
		if err := s.setStatus(tx, sess, core.StatusQueued); err != nil {
			return nil, err
		}
	}
	sess.UpdatedAt = now
	if err := saveSession(tx, sess); err != nil {
		return nil, err
	}
	if err := scheduleWake(tx, sess.ID, now.Time); err != nil {
		return nil, err
	}
	return out, nil
}

// QueueInputs durably queues inputs on an existing session.
func (s *Store) QueueInputs(ctx context.Context, sessionID string, req core.QueueRequest) (*core.QueueResult, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if len(req.Inputs) == 0 {
		// Nothing to queue would still mark the session queued and wake it.
		return nil, fmt.Errorf("queue inputs: no inputs: %w", core.ErrInvalid)
	}
	if err := validateKeys(req.Idempotency, req.Dedupe); err != nil {
		return nil, err
	}
	inputs, err := prepareInputs(req.Inputs)
	if err != nil {
		return nil, err
	}
	// A read transaction answers replays, duplicates and refusals without
	// an fsync and without failing a shared batch.
	var res *core.QueueResult
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		res, _, err = s.queueInputs(tx, sessionID, req, nil, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue inputs: %w", err)
	}
	if res != nil {
		return res, nil
	}
	err = s.commit.write(func(tx *bolt.Tx) ([]core.Change, error) {
		res = nil // bbolt may run this more than once
		r, ch, err := s.queueInputs(tx, sessionID, req, inputs, true)
		res = r
		return ch, err
	})
	if err != nil {
		return nil, fmt.Errorf("queue inputs: %w", err)
	}
	return res, nil
}

// queueInputs returns a result only when the request is a replay or a
// duplicate, or, with write set, once the inputs are queued.
func (s *Store) queueInputs(tx *bolt.Tx, sessionID string, req core.QueueRequest, inputs []core.Event, write bool) (*core.QueueResult, []core.Change, error) {
	replay, dup, err := checkKeys(tx, req.Idempotency, req.Dedupe)
	if err != nil {
		return nil, nil, err
	}
	if replay != nil || dup {
		sess, _ := loadSession(tx, sessionID) // informative only
		return &core.QueueResult{Session: sess, Duplicate: dup, Replay: replay}, nil, nil
	}
	sess, err := loadWritable(tx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if req.AnswersPending {
		if err := answersPending(sess, req.Inputs); err != nil {
			return nil, nil, err
		}
	}
	if !write {
		return nil, nil, nil
	}
	before := sess.Status
	now := s.clock()
	queued, err := s.queue(tx, sess, inputs, now)
	if err != nil {
		return nil, nil, err
	}
	if err := recordKeys(tx, req.Idempotency, req.Dedupe, now.Time); err != nil {
		return nil, nil, err
	}
	return &core.QueueResult{Session: sess, Inputs: queued}, []core.Change{changeOf(sess, before, core.Change{Queued: queued})}, nil
}

// answersPending refuses tool answers that name a call the session does
// not wait for.
func answersPending(sess *core.Session, inputs []core.Event) error {
	var waiting []string
	if sess.PendingAction != nil {
		waiting = sess.PendingAction.ToolUseIDs
	}
	for i, e := range inputs {
		if e.Type != core.TypeUserCustomToolResult && e.Type != core.TypeUserToolConfirmation {
			continue
		}
		var b struct {
			ToolUseID string `json:"tool_use_id"`
		}
		if err := e.Decode(&b); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
		if !slices.Contains(waiting, b.ToolUseID) {
			return fmt.Errorf("events[%d]: %s for tool_use_id %q: session %s waits for no such call (pending_action: %q): %w",
				i, e.Type, b.ToolUseID, sess.ID, waiting, core.ErrConflict)
		}
	}
	return nil
}

// changeOf completes what a write did to sess for the commit stream; before
// is the session's status when the write began ("" for a new session).
func changeOf(sess *core.Session, before core.Status, c core.Change) core.Change {
	c.SessionID = sess.ID
	if sess.Origin != nil {
		c.Provider = sess.Origin.Provider
	}
	if sess.Status != before {
		c.Status = sess.Status
	}
	return c
}

// Pending returns the queued inputs not yet in the log, in queue order.
func (s *Store) Pending(ctx context.Context, sessionID string) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []core.Event{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if _, err := loadSession(tx, sessionID); err != nil {
			return err
		}
		pending := bkt(tx, bucketPending).Bucket([]byte(sessionID))
		if pending == nil {
			return nil
		}
		return pending.ForEach(func(_, v []byte) error {
			var e core.Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode pending input: %w", err)
			}
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pending inputs: %w", err)
	}
	return out, nil
}
