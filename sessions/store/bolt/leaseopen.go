package bolt

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// TakeLeaseOpen is TakeLease that also opens the session's turn in the
// transaction that grants the lease, so a wake commits once before it
// calls the model instead of twice. The turn opens only when the session
// would open one at once under the new lease (see openable); open is the
// append that opens it (harness.OpenTurn's), fenced here with the new
// epoch. It returns what the append logged: none when the turn did not
// open, and the caller goes on as after TakeLease.
func (s *Store) TakeLeaseOpen(ctx context.Context, sessionID, holder string, ttl time.Duration, open core.AppendRequest) (core.Lease, bool, []core.Event, error) {
	if err := record.CheckClaim("take lease", holder, ttl); err != nil {
		return core.Lease{}, false, nil, err
	}
	events, err := record.PrepareEvents(open.Events)
	if err != nil {
		return core.Lease{}, false, nil, err
	}
	type taken struct {
		lease  core.Lease
		ok     bool
		opened []core.Event
	}
	out, err := writeSession(ctx, s, "take lease", func(tx *bbolt.Tx) (taken, []core.Change, error) {
		l, ok, sess, err := s.takeLeaseTx(tx, sessionID, holder, ttl)
		if err != nil || !ok {
			return taken{}, nil, err
		}
		can, err := openable(tx, sess, l)
		if err != nil || !can {
			return taken{lease: l, ok: true}, nil, err
		}
		req := open
		req.Epoch, req.TakeInputs = l.Epoch, true
		opened, changes, err := s.appendTx(tx, sessionID, req, events)
		if err != nil {
			return taken{}, nil, err
		}
		return taken{lease: l, ok: true, opened: opened}, changes, nil
	})
	if err != nil {
		return core.Lease{}, false, nil, fmt.Errorf("take lease: %w", err)
	}
	return out.lease, out.ok, out.opened, nil
}

// openable reports whether a session just leased as l opens a turn at
// once: it is not archived, no turn is open (a paused or interrupted one
// resumes instead), it did not move here from another holder (the new
// holder logs its sandbox's reset first), and its first pending input is
// not an interrupt (which is logged with no turn).
func openable(tx *bbolt.Tx, sess *core.Session, l core.Lease) (bool, error) {
	if sess.Status == core.StatusArchived || sess.TurnID != "" || l.Moved() {
		return false, nil
	}
	v, err := firstQueued(tx, sess.ID)
	if v == nil || err != nil {
		return false, err
	}
	first, err := record.DecodeEvent("pending input", v)
	if err != nil {
		return false, err
	}
	return first.Type != core.TypeUserInterrupt, nil
}
