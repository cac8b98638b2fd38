package record

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
)

// CheckDestination refuses what the store cannot deliver to. The API
// validates more (and first).
func CheckDestination(d *core.Destination) error {
	if !core.HasPrefix(d.ID, core.PrefixDestination) {
		return fmt.Errorf("destination id %q is not a destination id: %w", d.ID, core.ErrInvalid)
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("destination url %q: want an absolute http(s) URL: %w", d.URL, core.ErrInvalid)
	}
	if _, err := core.ParseLevel(string(d.Level)); err != nil {
		return err
	}
	if d.SessionID != "" && d.AgentID != "" {
		return fmt.Errorf("destination %s: a session destination takes no agent filter: %w", d.ID, core.ErrInvalid)
	}
	return nil
}

// NewDestination is the destination a store creates for nd at now:
// checked, active, its level and types defaulted. A caller's creation
// time is kept: the session API shows the destinations in its answer
// before they are committed.
func NewDestination(nd core.NewDestination, now core.Time) (*core.Destination, error) {
	d := nd.Destination
	if err := CheckDestination(&d); err != nil {
		return nil, err
	}
	if d.Level == "" {
		d.Level = core.LevelInternal
	}
	if d.Types == nil {
		d.Types = []string{}
	}
	d.Status = core.DestinationActive
	d.FailingSince, d.PausedAt = nil, nil
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now
	}
	d.UpdatedAt = d.CreatedAt
	return &d, nil
}

// PauseDestination pauses d at now; the store takes its streams out of
// the due index (their deliveries stay queued) until it is resumed.
func PauseDestination(d *core.Destination, now core.Time) {
	d.Status, d.PausedAt, d.UpdatedAt = core.DestinationPaused, now.Ptr(), now
}

// ResumeDestination makes d active at now and forgets its run of
// failures; the store schedules each of its streams at its first pending
// delivery.
func ResumeDestination(d *core.Destination, now core.Time) {
	d.Status, d.PausedAt, d.FailingSince, d.UpdatedAt = core.DestinationActive, nil, nil, now
}

// NewDelivery is the pending delivery of logged event e of sess to the
// destination with destID, numbered num (its id orders deliveries as
// they were queued), due at once.
func NewDelivery(destID string, sess *core.Session, e core.Event, num uint64, now core.Time) *core.Delivery {
	return &core.Delivery{
		ID: core.NewSeqID(core.PrefixDelivery, now.Time, num), DestinationID: destID, SessionID: sess.ID,
		EventID: e.ID, EventType: e.Type, Seq: e.Seq, State: core.DeliveryPending,
		Attempts: []core.Attempt{}, NextAttemptAt: now.Ptr(), CreatedAt: now, UpdatedAt: now,
	}
}

// DecodeDelivery reads a stored delivery; no attempts are an empty list.
// A record as encoding/json writes it, with no escape in its strings, is
// read field by field; any other goes through encoding/json.
func DecodeDelivery(raw []byte) (*core.Delivery, error) {
	d, ok := readDelivery(raw)
	var err error
	if !ok {
		d, err = Decode[core.Delivery]("delivery", raw)
	}
	if err == nil && d.Attempts == nil {
		d.Attempts = []core.Attempt{}
	}
	return d, err
}

// Redeliver puts a delivered or dead delivery back to pending, due at
// now, its attempts' times forgotten; a pending one is a conflict.
func Redeliver(d *core.Delivery, now core.Time) error {
	if d.State == core.DeliveryPending {
		return fmt.Errorf("delivery %s is pending already: %w", d.ID, core.ErrConflict)
	}
	d.State, d.FirstAttemptAt, d.NextAttemptAt, d.DeliveredAt, d.UpdatedAt = core.DeliveryPending, nil, now.Ptr(), nil, now
	return nil
}

// Orphaned ends dead, at now, a pending delivery whose destination is
// deleted; its record stays.
func Orphaned(d *core.Delivery, now core.Time) {
	d.State, d.NextAttemptAt, d.UpdatedAt = core.DeliveryDead, nil, now
}

// AddAttempt appends an attempt, keeping the most recent ones.
func AddAttempt(d *core.Delivery, a core.Attempt, now core.Time) {
	d.AttemptCount++
	d.Attempts = append(d.Attempts, a)
	if n := len(d.Attempts) - core.MaxAttemptsKept; n > 0 {
		d.Attempts = append([]core.Attempt{}, d.Attempts[n:]...)
	}
	if d.FirstAttemptAt == nil {
		d.FirstAttemptAt = a.At.Ptr()
	}
	d.UpdatedAt = now
}

// Attempt is what an attempt's result did to its pending delivery and its
// destination, for the store to write.
type Attempt struct {
	// Settled: the delivery is delivered or dead, and leaves its
	// stream's queue.
	Settled bool
	// DestinationChanged: a success ended the destination's run of
	// failures, or a failure extended it; the store saves it.
	DestinationChanged bool
	// Paused: the run of failures lasted r.PauseAfter, and paused the
	// destination (PauseDestination).
	Paused bool
}

// Attempted applies the result r of an attempt of pending delivery d to
// d and its destination at now (AddAttempt has added the attempt): a
// success delivers it and ends the destination's run of failures; a
// failure schedules it again at r.RetryAt, or kills it without one, and
// extends the run, which pauses the destination once it lasts
// r.PauseAfter.
func Attempted(d *core.Delivery, dest *core.Destination, r core.AttemptResult, now core.Time) Attempt {
	var out Attempt
	if r.Success {
		d.State, d.DeliveredAt, d.NextAttemptAt = core.DeliveryDelivered, r.Attempt.At.Ptr(), nil
		if dest.FailingSince != nil {
			dest.FailingSince, dest.UpdatedAt = nil, now
			out.DestinationChanged = true
		}
		out.Settled = true
		return out
	}
	if r.RetryAt.IsZero() {
		d.State, d.NextAttemptAt = core.DeliveryDead, nil
		out.Settled = true
	} else {
		d.NextAttemptAt = core.NewTime(r.RetryAt).Ptr()
	}
	if dest.FailingSince == nil {
		dest.FailingSince = r.Attempt.At.Ptr()
	}
	dest.UpdatedAt = now
	out.DestinationChanged = true
	if r.PauseAfter > 0 && dest.Status == core.DestinationActive && r.Attempt.At.Sub(dest.FailingSince.Time) >= r.PauseAfter {
		PauseDestination(dest, now)
		out.Paused = true
	}
	return out
}

// DueNow reports whether h, the first queued delivery of a stream of
// dest, is to be attempted at now.
func DueNow(h *core.Delivery, dest *core.Destination, now core.Time) bool {
	return h != nil && dest.Status == core.DestinationActive && (h.NextAttemptAt == nil || !h.NextAttemptAt.After(now.Time))
}

// AttemptRefused reports whether an attempt's recording was refused (its claim
// lost, its delivery or destination gone) rather than failed: in a batch
// the others are still recorded.
func AttemptRefused(err error) bool {
	return errors.Is(err, core.ErrLeaseLost) || errors.Is(err, core.ErrNotFound)
}

// AttemptErr words a batch's refusal as RecordAttempt words its own.
func AttemptErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("record attempt: %w", err)
}
