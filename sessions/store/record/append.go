package record

import "github.com/switchboardhq/switchboard/core"

// Appended is what an append logs and what it does beside its log,
// decided once for both stores; each writes it in the append's
// transaction.
type Appended struct {
	// Events are what to log, with their seqs: the inputs taken, then
	// the events appended.
	Events []core.Event
	// Status is the session's status after them, which the store sets
	// with its status counts.
	Status core.Status
	// Lease is what they did to the lease of the session's open turn:
	// LeaseTaken gives it to the appender (the request's Holder).
	Lease Lease
	// MarkSinks: a turn started, so every sink it may answer through
	// (core.SinkProviders: its origin's, its links') may be behind on
	// the session from now on. Marked in the transaction that opens the
	// turn, a crash after it cannot lose the turn's output.
	MarkSinks bool
	// Completed are the turn.completed events logged, for the hourly
	// counters. A completed turn also clears the session's wake unless
	// inputs wait.
	Completed []Completed
}

// Completed is a logged turn.completed with its body.
type Completed struct {
	Event core.Event
	Done  *core.TurnCompletedBody
}

// Append logs, on sess at now, the inputs an append took (in queue order;
// each gets processed_at and the request's turn) and then events (each
// gets the session, created_at when unset and the request's turn when it
// has none): it gives each the next seq and folds it into the session's
// record (its result, stop reason, pending action, open turn, usage and
// cost). Nothing to log leaves sess as it was.
func Append(sess *core.Session, taken []core.Event, events []LogEvent, req core.AppendRequest, now core.Time) Appended {
	a := Appended{Status: sess.Status}
	log := func(e core.Event) core.Event {
		sess.LastSeq++
		e.Seq = sess.LastSeq
		a.Events = append(a.Events, e)
		return e
	}
	for _, e := range taken {
		e.ProcessedAt = now.Ptr()
		if req.TurnID != "" {
			e.TurnID = req.TurnID
		}
		log(e)
	}
	for _, le := range events {
		e := le.Ev
		e.SessionID = sess.ID
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		if e.TurnID == "" {
			e.TurnID = req.TurnID
		}
		e = log(e)
		FollowResult(sess, le, e)
		a.project(sess, le, e, req.Holder)
	}
	if len(a.Events) > 0 {
		sess.UpdatedAt = now
	}
	return a
}

// project folds one logged event into the session's record.
func (a *Appended) project(sess *core.Session, le LogEvent, e core.Event, holder string) {
	switch {
	case le.Status != nil:
		sess.StopReason = le.Status.StopReason
		switch FollowPause(sess, le.Status) {
		case LeaseReleased:
			a.Lease = LeaseReleased
		case LeaseTaken:
			if holder != "" {
				a.Lease = LeaseTaken
			}
		}
		a.Status = le.Status.Status
	case e.Type == core.TypeTurnStarted:
		sess.TurnID = e.TurnID
		sess.PendingAction = nil
		a.MarkSinks = true
		a.Lease = LeaseTaken
	case le.Done != nil:
		sess.Usage = sess.Usage.Add(le.Done.Usage)
		sess.CostUSD = core.AddCost(sess.CostUSD, le.Done.CostUSD)
		sess.Turns++
		sess.PendingAction = nil
		if le.Done.YieldReason == core.ReasonRequiresAction {
			sess.PendingAction = &core.PendingAction{ToolUseIDs: append([]string{}, le.Done.PendingToolUseIDs...)}
		}
		sess.TurnID = ""
		a.Lease = LeaseReleased
		a.Completed = append(a.Completed, Completed{Event: e, Done: le.Done})
	}
}
