package core

import (
	"context"
	"time"
)

// Lease is a runtime's hold on one session: while it lasts, only its
// holder runs the session's turns. Every write the turn makes carries
// Epoch, which the store checks in the write's own transaction, so a
// holder that was paused or cut off and lost the session cannot write
// after another took it over (fencing).
type Lease struct {
	SessionID string
	Holder    string
	Epoch     uint64
	// Previous is the holder that ran the session before this grant ("" at
	// the first). When it is another holder the session moved here, and
	// what it left on that replica (its sandbox) is not here.
	Previous string
}

// Moved reports whether the session ran on another holder before this
// grant.
func (l Lease) Moved() bool { return l.Previous != "" && l.Previous != l.Holder }

// LeaseStore hands out sessions' leases. Expiry is judged by the store's
// clock (the database's, when replicas share one), never by a holder's.
type LeaseStore interface {
	// TakeLease grants holder the session for ttl unless another holder's
	// lease is live, or the session's last holder is a replica whose
	// heartbeat is fresh and that is not draining (its sandbox is there):
	// then ok is false. Every grant has a new epoch, higher than any the
	// session had, so writes of earlier grants are refused from now on,
	// and names the holder that ran the session last (Lease.Previous).
	TakeLease(ctx context.Context, sessionID, holder string, ttl time.Duration) (l Lease, ok bool, err error)
	// RenewLease extends a live lease by ttl; ErrLeaseLost when another
	// holder took the session or the lease expired and was released.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) error
	// ReleaseLease ends the lease now, so another replica may take the
	// session at once; a lease already lost is left alone.
	ReleaseLease(ctx context.Context, l Lease) error
	// Heartbeat says holder is alive for ttl (draining: it takes no new
	// sessions and its sessions may go elsewhere); other holders respect
	// its affinity only while its heartbeat is fresh.
	Heartbeat(ctx context.Context, holder string, ttl time.Duration, draining bool) error
	// LastHolder is the holder of the session's latest grant, live or
	// not; "" when it never had one. A replica that finds another there
	// knows the session moved away while it was down.
	LastHolder(ctx context.Context, sessionID string) (string, error)
}

// Claim is a holder's hold on a stream of output that must leave once and
// in order: a session's provider sink, or one (destination, session)
// delivery stream. Like a lease, it expires by the store's clock unless
// renewed, every grant has a higher epoch than the stream had, and each
// write the holder makes for the stream (a saved position, an attempt's
// result) carries Epoch and is refused with ErrLeaseLost once another
// holder has claimed the stream.
type Claim struct {
	Holder string
	Epoch  uint64
}
