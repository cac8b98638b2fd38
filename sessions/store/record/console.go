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

// NewConsoleSession is the sign-in CreateConsoleSession stores for in,
// and its stored form: its id, CSRF token, key check and expiry required,
// no NUL in what is text (PostgreSQL's text holds none), its times in
// ConsoleTime. Its errors are named by the call.
func NewConsoleSession(in *core.ConsoleSession) (*core.ConsoleSession, []byte, error) {
	cs, err := newConsoleSession(in)
	var raw []byte
	if err == nil {
		raw, err = Encode("console sign-in", cs.ID, cs)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create console sign-in: %w", err)
	}
	return cs, raw, nil
}

func newConsoleSession(in *core.ConsoleSession) (*core.ConsoleSession, error) {
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

// LiveConsoleSession is a stored sign-in, unless it expired at now (at
// its ExpiresAt, not after): then it is not found.
func LiveConsoleSession(s *core.ConsoleSession, now time.Time) (*core.ConsoleSession, error) {
	if !s.ExpiresAt.After(now) {
		return nil, fmt.Errorf("console sign-in %s expired: %w", s.ID, core.ErrNotFound)
	}
	return s, nil
}

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
