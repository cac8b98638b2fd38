package core

import (
	"fmt"
	"time"
)

// Time is a UTC instant serialised with exactly millisecond precision
// ("2026-11-22T10:00:00.123Z"), the format of every timestamp in the API.
type Time struct{ time.Time }

// TimeLayout is how a Time is written: UTC, to the millisecond.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Now returns the current time truncated to milliseconds.
func Now() Time { return NewTime(time.Now()) }

// NewTime converts t to a Time, truncating to milliseconds.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// MarshalJSON writes the fixed-precision form; the zero time is null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(TimeLayout) + `"`), nil
}

// UnmarshalJSON accepts null or any RFC 3339 timestamp.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("time: want a string, got %s", b)
	}
	p, err := time.Parse(time.RFC3339Nano, string(b[1:len(b)-1]))
	if err != nil {
		return fmt.Errorf("time: %w", err)
	}
	*t = NewTime(p)
	return nil
}

// Ptr returns a pointer to t, for optional fields.
func (t Time) Ptr() *Time { return &t }

// WallClock is the system's clock, with its timers: the default of the
// packages that take a clock so that tests can drive their waits.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// Timer fires once after d; stop releases it early.
func (WallClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
