package record

import (
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// LogEvent is an event to append with the bodies a store's projection
// reads, decoded once before the write.
type LogEvent struct {
	Ev     core.Event
	Status *core.StatusChangedBody
	Done   *core.TurnCompletedBody
}

// PrepareEvents validates events and fixes their ids before the write, so
// a malformed event fails alone and a write run again is deterministic.
func PrepareEvents(in []core.Event) ([]LogEvent, error) {
	out := make([]LogEvent, len(in))
	for i, e := range in {
		if e.Type == "" {
			return nil, fmt.Errorf("event %d: type is required: %w", i, core.ErrInvalid)
		}
		e, err := PrepareEvent(e)
		if err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, e.Type, err)
		}
		le := LogEvent{Ev: e}
		switch e.Type {
		case core.TypeStatusChanged:
			le.Status = &core.StatusChangedBody{}
			if err := json.Unmarshal(e.Body, le.Status); err != nil || !KnownStatus(le.Status.Status) {
				return nil, fmt.Errorf("event %d: %s body %s: %w", i, e.Type, e.Body, core.ErrInvalid)
			}
		case core.TypeTurnCompleted:
			le.Done = &core.TurnCompletedBody{}
			if err := json.Unmarshal(e.Body, le.Done); err != nil {
				return nil, fmt.Errorf("event %d: %s body: %v: %w", i, e.Type, err, core.ErrInvalid)
			}
		}
		out[i] = le
	}
	return out, nil
}
