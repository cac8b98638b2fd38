package oauth

import (
	"context"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// memOnce is a hand-written core.OnceStore.
type memOnce struct {
	mu   sync.Mutex
	keys map[string]time.Time
}

func (m *memOnce) Once(_ context.Context, key string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = map[string]time.Time{}
	}
	// Keys never expire here: the tests' clocks are fixed in the past.
	if _, ok := m.keys[key]; ok {
		return false, nil
	}
	m.keys[key] = until
	return true, nil
}

// memTokens is a hand-written TokenStore.
type memTokens struct {
	mu         sync.Mutex
	refreshing sync.Mutex // one refresh at a time, as a store orders them
	sealed     map[string][]byte
	puts       int
}

func (m *memTokens) InstallationTokens(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.sealed[id]
	if !ok {
		return nil, core.ErrNotFound
	}
	return v, nil
}

func (m *memTokens) PutInstallationTokens(_ context.Context, id string, sealed []byte, _ *core.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sealed == nil {
		m.sealed = map[string][]byte{}
	}
	m.sealed[id] = sealed
	m.puts++
	return nil
}

func (m *memTokens) RefreshInstallationTokens(ctx context.Context, id string, refresh func([]byte) ([]byte, *core.Time, error)) ([]byte, error) {
	m.refreshing.Lock()
	defer m.refreshing.Unlock()
	cur, err := m.InstallationTokens(ctx, id)
	if err != nil {
		return nil, err
	}
	next, exp, err := refresh(cur)
	if err != nil || next == nil {
		return cur, err
	}
	return next, m.PutInstallationTokens(ctx, id, next, exp)
}
