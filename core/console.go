package core

import (
	"context"
	"time"
)

// ConsoleSession is one sign-in to the console. The browser's cookie holds
// a random secret; the store keeps only its hash, so a leaked store grants
// no sign-in. Sessions live in the store, so a sign-out on one replica
// revokes the cookie on all of them.
type ConsoleSession struct {
	// ID is the hex SHA-256 of the cookie's secret.
	ID string `json:"id"`
	// CSRF is the token every form of this sign-in carries.
	CSRF string `json:"csrf"`
	// KeyCheck fingerprints the admin token the sign-in was made with: a
	// session whose KeyCheck is not the current token's is refused, so
	// changing the token signs every browser out.
	KeyCheck string `json:"key_check"`
	// Address is the client address of the sign-in, for the record.
	Address   string    `json:"address,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ConsoleStore keeps console sign-ins and counts failed ones.
type ConsoleStore interface {
	// CreateConsoleSession saves a sign-in; an existing ID is ErrConflict.
	CreateConsoleSession(ctx context.Context, s *ConsoleSession) error
	// GetConsoleSession returns the sign-in with id; ErrNotFound when there
	// is none or it expired at now.
	GetConsoleSession(ctx context.Context, id string, now time.Time) (*ConsoleSession, error)
	// DeleteConsoleSession signs out; deleting nothing is not an error.
	DeleteConsoleSession(ctx context.Context, id string) error
	// ReserveSignIn counts a sign-in attempt from address at now, before
	// its token is checked, unless address already has limit counted since
	// now-window (those a later clock stamped after now included): then it
	// counts nothing and ok is false. The check and the count are one
	// step, shared by the replicas, so of attempts made at once at most
	// limit are counted and go on. An attempt that signs in is uncounted
	// (ReleaseSignIn); the others stay counted, as failures.
	ReserveSignIn(ctx context.Context, address string, now time.Time, window time.Duration, limit int) (ok bool, err error)
	// ReleaseSignIn uncounts one attempt ReserveSignIn counted for
	// address at now; none there is not an error.
	ReleaseSignIn(ctx context.Context, address string, now time.Time) error
	// SignInFailures is how many attempts address has counted in
	// (now-window, now].
	SignInFailures(ctx context.Context, address string, now time.Time, window time.Duration) (int, error)
	// SweepConsole deletes sign-ins expired and failures made before
	// before, and returns how many records went.
	SweepConsole(ctx context.Context, before time.Time) (int, error)
}
