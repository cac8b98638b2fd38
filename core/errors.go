package core

import "errors"

// Sentinel errors. Implementations wrap them with %w so callers (and the
// API's error mapping) can test with errors.Is.
var (
	// ErrNotFound: the agent, session or record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a version mismatch, a reused idempotency key with a
	// different body, or a name already taken.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the request is malformed or names something unknown.
	ErrInvalid = errors.New("invalid request")
	// ErrArchived: the session is archived and read-only.
	ErrArchived = errors.New("session is archived")
	// ErrLocked: another process holds the data directory.
	ErrLocked = errors.New("data directory is in use by another process")
	// ErrLeaseLost: another runtime took the session (its lease epoch
	// moved on): the write was refused and the turn must stop.
	ErrLeaseLost = errors.New("session lease lost to another runtime")
	// ErrModelNotConfigured: a session needs a model that has no client or key.
	ErrModelNotConfigured = errors.New("model not configured")
	// ErrPanicked: the work panicked (Recover). Its text is all a client
	// is told; the panic's value and stack are in the gateway's log.
	ErrPanicked = errors.New("internal error")
)

// ErrUnauthorized: no valid credentials, or a client token on an admin route.
var ErrUnauthorized = errors.New("unauthorized")

// ErrForbidden: the principal or credential may not be used for this.
var ErrForbidden = errors.New("forbidden")
