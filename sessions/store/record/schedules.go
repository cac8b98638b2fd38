package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// MaxScheduleInput bounds a schedule's input text.
const MaxScheduleInput = 32 << 10

// ValidSchedule checks what a store needs of a schedule: one kind (cron
// or at), one target, an input.
func ValidSchedule(s *core.Schedule) error {
	switch {
	case (s.Cron == "") == (s.At == nil):
		return fmt.Errorf("schedule: give exactly one of cron and at: %w", core.ErrInvalid)
	case (s.Target.SessionID == "") == (s.Target.Agent == ""):
		return fmt.Errorf("schedule: target exactly one of a session and an agent: %w", core.ErrInvalid)
	case s.Target.Input == "":
		return fmt.Errorf("schedule: the input is empty: %w", core.ErrInvalid)
	case len(s.Target.Input) > MaxScheduleInput:
		return fmt.Errorf("schedule: the input is over %d bytes: %w", MaxScheduleInput, core.ErrInvalid)
	}
	return nil
}

// FireInput is the input a schedule's fire for due queues, and the dedupe
// key that makes the fire once even if the schedule's record were lost.
func FireInput(s *core.Schedule, due time.Time) ([]core.Event, []string, error) {
	body, err := json.Marshal(core.MessageBody{Text: s.Target.Input, ScheduleID: s.ID})
	if err != nil {
		return nil, nil, err
	}
	in, err := PrepareInputs([]core.Event{core.NewInput(core.TypeUserMessage, body)})
	if err != nil {
		return nil, nil, err
	}
	return in, []string{"schedule:" + s.ID + ":" + strconv.FormatInt(due.UnixNano(), 10)}, nil
}

// Fired moves a schedule past the due time it fired for.
func Fired(s *core.Schedule, due time.Time, next *time.Time, sessionID string, now core.Time) {
	at := core.NewTime(due)
	s.LastFiredAt, s.LastSessionID, s.Fires, s.UpdatedAt = &at, sessionID, s.Fires+1, now
	s.NextAt = nil
	if next != nil {
		n := core.NewTime(*next)
		s.NextAt = &n
	}
}

// Stopped pauses a schedule whose target session cannot take its input.
func Stopped(s *core.Schedule, err error, now core.Time) {
	s.Paused, s.NextAt, s.LastError, s.UpdatedAt = true, nil, err.Error(), now
}

// IsDue reports whether due is still the schedule's to fire.
func IsDue(s *core.Schedule, due time.Time) bool {
	return !s.Paused && s.NextAt != nil && s.NextAt.Equal(due)
}

// FireOps are a store's own writes, in the transaction of a fire.
type FireOps struct {
	Queue  func(sessionID string, req core.QueueRequest, inputs []core.Event) (*core.QueueResult, []core.Change, error)
	Create func(req core.NewSession, inputs []core.Event) (*core.CreateResult, []core.Change, error)
	Put    func(sc *core.Schedule) error
}

// Fire fires sc, read under the transaction's lock, for due: unless due
// is no longer its to fire, it queues the input on the target session (a
// session that is archived or gone stops the schedule instead) or on a
// new session made from start, and moves the schedule on to next.
func Fire(sc *core.Schedule, due time.Time, next *time.Time, start *core.NewSession, now core.Time, ops FireOps) (*core.Fire, []core.Change, error) {
	out := &core.Fire{Schedule: sc}
	if !IsDue(sc, due) {
		return out, nil, nil
	}
	inputs, dedupe, err := FireInput(sc, due)
	if err != nil {
		return nil, nil, err
	}
	var changes []core.Change
	switch {
	case sc.Target.SessionID != "":
		res, ch, err := ops.Queue(sc.Target.SessionID, core.QueueRequest{Inputs: inputs, Dedupe: dedupe}, inputs)
		if errors.Is(err, core.ErrArchived) || errors.Is(err, core.ErrNotFound) {
			Stopped(sc, err, now)
			return out, nil, ops.Put(sc)
		}
		if err != nil {
			return nil, nil, err
		}
		out.Session, changes = res.Session, ch
	case start == nil:
		return nil, nil, fmt.Errorf("a new session of agent %s needs its start: %w", sc.Target.Agent, core.ErrInvalid)
	default:
		req := *start
		req.Inputs, req.Dedupe = inputs, dedupe
		res, ch, err := ops.Create(req, inputs)
		if err != nil {
			return nil, nil, err
		}
		out.Session, out.Created, changes = res.Session, res.Created, ch
	}
	if out.Session == nil {
		// A duplicate of a fire whose record was lost: move on.
		Fired(sc, due, next, "", now)
		return out, nil, ops.Put(sc)
	}
	Fired(sc, due, next, out.Session.ID, now)
	out.Fired = true
	return out, changes, ops.Put(sc)
}

// NewSchedule is the schedule CreateSchedule stores for in at now: checked,
// under a new id.
func NewSchedule(in *core.Schedule, now core.Time) (*core.Schedule, error) {
	if err := ValidSchedule(in); err != nil {
		return nil, err
	}
	out := *in
	out.ID = core.NewID(core.PrefixSchedule)
	out.CreatedAt, out.UpdatedAt = now, now
	return &out, nil
}

// UpdateSchedule is old changed by fn, with what fn may not change kept.
func UpdateSchedule(old *core.Schedule, fn func(*core.Schedule) error, now core.Time) (*core.Schedule, error) {
	next := *old
	if err := fn(&next); err != nil {
		return nil, err
	}
	next.ID, next.CreatedAt, next.CreatedBy, next.UpdatedAt = old.ID, old.CreatedAt, old.CreatedBy, now
	if err := ValidSchedule(&next); err != nil {
		return nil, err
	}
	return &next, nil
}
