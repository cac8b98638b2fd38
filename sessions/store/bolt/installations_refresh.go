package bolt

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// refreshLocks orders token refreshes per installation. One process owns
// a bbolt file, so a lock in memory orders every refresh of its tokens;
// a lock is a channel so that a waiter can give up when its ctx ends.
type refreshLocks struct {
	mu    sync.Mutex
	locks map[string]*refreshLock
}

type refreshLock struct {
	held    chan struct{} // holds a value while a refresh runs
	waiters int           // callers holding or waiting: at zero it goes
}

// lock waits for id's refresh lock; the function it returns releases it.
func (r *refreshLocks) lock(ctx context.Context, id string) (func(), error) {
	r.mu.Lock()
	if r.locks == nil {
		r.locks = map[string]*refreshLock{}
	}
	l := r.locks[id]
	if l == nil {
		l = &refreshLock{held: make(chan struct{}, 1)}
		r.locks[id] = l
	}
	l.waiters++
	r.mu.Unlock()
	leave := func() {
		r.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(r.locks, id)
		}
		r.mu.Unlock()
	}
	select {
	case l.held <- struct{}{}:
		return func() { <-l.held; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctxErr(ctx)
	}
}

// RefreshInstallationTokens renews an installation's tokens one caller
// at a time (see core.InstallationStore): it holds the installation's
// refresh lock while it reads the tokens, runs refresh with them and
// stores what refresh returns. No bbolt transaction is open while
// refresh calls the platform; the installation's other writes do not
// wait for it.
func (s *Store) RefreshInstallationTokens(ctx context.Context, id string, refresh func(current []byte) (next []byte, expiresAt *core.Time, err error)) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	unlock, err := s.refreshes.lock(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("refresh installation tokens: wait for the lock: %w", err)
	}
	defer unlock()
	current, err := s.InstallationTokens(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("refresh installation tokens: %w", err)
	}
	return record.RefreshTokens(s.log, id, current, refresh, func(next []byte, expiresAt *core.Time) error {
		return s.setInstallationTokens(context.WithoutCancel(ctx), "", id, next, expiresAt)
	})
}
