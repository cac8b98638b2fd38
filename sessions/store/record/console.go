package record

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// ConsoleTime is a console record's time as both stores keep and compare
// it: UTC, truncated to the millisecond (the precision of core.Time), so a
// sign-in expires, and a failure leaves its window or is swept, at the
// same instant in either store. SweepConsole's before is taken so too.
func ConsoleTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// NewConsoleSession is the sign-in CreateConsoleSession stores for in: its
// id, CSRF token, key check and expiry required, no NUL in what is text
// (PostgreSQL's text holds none), its times in ConsoleTime.
func NewConsoleSession(in *core.ConsoleSession) (*core.ConsoleSession, error) {
	if in == nil {
		return nil, fmt.Errorf("console sign-in: none given: %w", core.ErrInvalid)
	}
	s := *in
	for _, f := range []struct{ name, v string }{{"id", s.ID}, {"csrf", s.CSRF}, {"key_check", s.KeyCheck}} {
		if f.v == "" {
			return nil, fmt.Errorf("console sign-in: %s is required: %w", f.name, core.ErrInvalid)
		}
	}
	if err := ConsoleText("id", s.ID); err != nil {
		return nil, err
	}
	if strings.ContainsRune(s.CSRF+s.KeyCheck+s.Address, 0) {
		return nil, fmt.Errorf("console sign-in %s: a NUL character: %w", s.ID, core.ErrInvalid)
	}
	if s.ExpiresAt.IsZero() {
		return nil, fmt.Errorf("console sign-in %s: expires_at is required: %w", s.ID, core.ErrInvalid)
	}
	s.CreatedAt, s.ExpiresAt = ConsoleTime(s.CreatedAt), ConsoleTime(s.ExpiresAt)
	return &s, nil
}

// ConsoleText checks a console sign-in's id or a client address a store
// is asked for: not empty, no NUL.
func ConsoleText(what, v string) error {
	if v == "" {
		return fmt.Errorf("console: %s is required: %w", what, core.ErrInvalid)
	}
	if strings.ContainsRune(v, 0) {
		return fmt.Errorf("console: %s %q holds a NUL character: %w", what, v, core.ErrInvalid)
	}
	return nil
}

// ConsoleLive reports whether a stored sign-in is still good at now: it
// expires at its ExpiresAt, not after.
func ConsoleLive(s *core.ConsoleSession, now time.Time) bool { return s.ExpiresAt.After(now) }

// FailureWindow checks a failure count's address and window and returns
// the window's bounds, (from, to], in ConsoleTime: a failure made at t
// counts when from < t <= to.
func FailureWindow(address string, now time.Time, window time.Duration) (from, to time.Time, err error) {
	if err := ConsoleText("address", address); err != nil {
		return time.Time{}, time.Time{}, err
	}
	if window <= 0 {
		return time.Time{}, time.Time{}, fmt.Errorf("console: failure window %v is not positive: %w", window, core.ErrInvalid)
	}
	to = ConsoleTime(now)
	return to.Add(-window), to, nil
}
