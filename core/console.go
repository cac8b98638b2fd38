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
	// RecordSignInFailure counts a failed sign-in from address at now and
	// returns how many address made in (now-window, now], this one
	// included. Replicas share the count.
	RecordSignInFailure(ctx context.Context, address string, now time.Time, window time.Duration) (int, error)
	// SignInFailures is the same count without recording one.
	SignInFailures(ctx context.Context, address string, now time.Time, window time.Duration) (int, error)
	// SweepConsole deletes sign-ins expired and failures made before
	// before, and returns how many records went.
	SweepConsole(ctx context.Context, before time.Time) (int, error)
}
