package record

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// PrepareCreate checks a create, and the destinations it makes with a
// new session, before any transaction, and fixes what a transaction run
// again must find the same: the new session's id (given, or made here),
// the inputs' ids, and those of req.StartInputs (in place).
func PrepareCreate(req *core.NewSession, dests []core.NewDestination) (id string, inputs []core.Event, err error) {
	if err := ValidateCreate(*req); err != nil {
		return "", nil, err
	}
	if inputs, err = PrepareInputs(req.Inputs); err != nil {
		return "", nil, err
	}
	if req.StartInputs, err = PrepareInputs(req.StartInputs); err != nil {
		return "", nil, err
	}
	id = req.Session.ID
	if id == "" {
		id = core.NewID(core.PrefixSession)
	}
	for i := range dests {
		if dests[i].Destination.SessionID != id {
			return "", nil, fmt.Errorf("create session: destination %d names session %q, not %q: %w", i, dests[i].Destination.SessionID, id, core.ErrInvalid)
		}
		if err := CheckDestination(&dests[i].Destination); err != nil {
			return "", nil, fmt.Errorf("create session: %w", err)
		}
	}
	return id, inputs, nil
}

// PrepareQueue checks a request to queue inputs on a session before any
// transaction and fixes its inputs' ids.
func PrepareQueue(req core.QueueRequest) ([]core.Event, error) {
	if len(req.Inputs) == 0 {
		// Nothing to queue would still mark the session queued and wake it.
		return nil, fmt.Errorf("queue inputs: no inputs: %w", core.ErrInvalid)
	}
	if err := ValidateKeys(req.Idempotency, req.Dedupe); err != nil {
		return nil, err
	}
	return PrepareInputs(req.Inputs)
}

// Queue is inputs as queued on sess at now: copies stamped with the
// session, queued_at and created_at (when not set), so a transaction run
// again starts over. It moves sess on as queueing does (updated at now)
// and returns the status it takes, which the store sets with its status
// counts: queued, unless a turn runs or a session budget paused it (the
// inputs wait for the turn its raise resumes).
func Queue(sess *core.Session, inputs []core.Event, now core.Time) ([]core.Event, core.Status) {
	out := make([]core.Event, len(inputs))
	for i, e := range inputs {
		e.SessionID = sess.ID
		if e.QueuedAt == nil {
			e.QueuedAt = now.Ptr()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		out[i] = e
	}
	sess.UpdatedAt = now
	if sess.Status != core.StatusRunning && !sess.BudgetPaused() {
		return out, core.StatusQueued
	}
	return out, sess.Status
}
