package record

import (
	"fmt"
	"maps"

	"github.com/switchboardhq/switchboard/core"
)

// PrepareFork fixes, before any transaction, the id of the session a fork
// makes: given, or made here.
func PrepareFork(f core.Fork) core.Fork {
	if f.Session.ID == "" {
		f.Session.ID = core.NewID(core.PrefixSession)
	}
	return f
}

// forkPoint is the seq a fork of a log copies up to: at, which must end
// a turn (its turn.completed, or the status change logged right after
// it), or for 0 the end of the log's last completed turn. events is the
// log from seq 1.
func forkPoint(id string, events []core.Event, at uint64) (uint64, error) {
	ends := func(i int) bool {
		e := events[i]
		if e.Type == core.TypeTurnCompleted {
			return true
		}
		return e.Type == core.TypeStatusChanged && i > 0 && events[i-1].Type == core.TypeTurnCompleted && events[i-1].TurnID == e.TurnID
	}
	if at == 0 {
		for i := len(events) - 1; i >= 0; i-- {
			if ends(i) {
				return events[i].Seq, nil
			}
		}
		return 0, fmt.Errorf("session %s has no completed turn to fork: %w", id, core.ErrConflict)
	}
	if at > uint64(len(events)) || events[at-1].Seq != at {
		return 0, fmt.Errorf("field \"at_seq\": session %s has no event %d (its last is %d): %w", id, at, len(events), core.ErrInvalid)
	}
	if !ends(int(at - 1)) {
		return 0, fmt.Errorf("field \"at_seq\": event %d of session %s is a %s, not the end of a turn (its turn.completed, or the status change after it): %w",
			at, id, events[at-1].Type, core.ErrInvalid)
	}
	return at, nil
}

// Forked is the record and log of the fork f of src, whose log is events
// (from seq 1): its events up to f.AtSeq (forkPoint) as the new session's
// (new ids), with the state they leave it in, and usage from zero. now
// stamps the record.
func Forked(src *core.Session, f core.Fork, events []core.Event, now core.Time) (*core.Session, []core.Event, error) {
	seq, err := forkPoint(src.ID, events, f.AtSeq)
	if err != nil {
		return nil, nil, err
	}
	sess := &core.Session{
		ID: f.Session.ID, Status: core.StatusIdle, Agent: src.Agent, Metadata: maps.Clone(src.Metadata),
		Environment: src.Environment, Tenant: src.Tenant, ClientTokenHash: f.Session.ClientTokenHash,
		ForkedFrom: &core.ForkRef{Session: src.ID, Seq: seq}, CreatedAt: now, UpdatedAt: now,
	}
	if sess.Metadata == nil {
		sess.Metadata = map[string]string{}
	}
	if src.Limits != nil {
		l := *src.Limits
		sess.Limits = &l
	}
	copied := make([]core.Event, seq)
	for i, e := range events[:seq] {
		e.ID, e.SessionID = core.NewID(core.PrefixEvent), sess.ID
		copied[i] = e
	}
	logged, err := PrepareEvents(copied)
	if err != nil {
		return nil, nil, fmt.Errorf("fork %s: %w", src.ID, err)
	}
	for i, le := range logged {
		e := le.Ev
		e.Seq = copied[i].Seq // PrepareEvents clears it for an append
		copied[i] = e
		FollowResult(sess, le, e)
		switch {
		case e.Type == core.TypeTurnStarted:
			sess.TurnID = e.TurnID
		case le.Done != nil:
			sess.TurnID, sess.PendingAction = "", nil
			sess.Status, sess.StopReason = core.StatusAfter(le.Done.YieldReason), le.Done.YieldReason
			if le.Done.YieldReason == core.ReasonRequiresAction {
				sess.PendingAction = &core.PendingAction{ToolUseIDs: append([]string{}, le.Done.PendingToolUseIDs...)}
			}
		}
	}
	sess.LastSeq = seq
	return sess, copied, nil
}
