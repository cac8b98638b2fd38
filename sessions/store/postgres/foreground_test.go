package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestForegroundWaitsForNoBackgroundConnection: with every connection of
// the background pool held, a request's input is still written and read,
// and background work waits until a connection comes back.
func TestForegroundWaitsForNoBackgroundConnection(t *testing.T) {
	s, _ := openTest(t, Options{MaxConns: 1})
	ctx := context.Background()
	held, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var release sync.Once
	// The store's Close waits for every connection to come back.
	t.Cleanup(func() { release.Do(held.Release) })
	background := make(chan error, 1)
	go func() {
		_, err := s.ListSessions(ctx, core.SessionFilter{Limit: 1})
		background <- err
	}()

	// A deadline far past any wait on a busy machine, so the test fails
	// rather than hangs if the foreground waited for the held connection.
	fg, cancel := context.WithTimeout(core.Foreground(ctx), time.Minute)
	defer cancel()
	res, err := s.CreateSession(fg, core.NewSession{Inputs: []core.Event{userText("hello")}})
	if err != nil {
		t.Fatalf("create a session in the foreground: %v", err)
	}
	if _, err := s.GetSession(fg, res.Session.ID); err != nil {
		t.Fatalf("read it in the foreground: %v", err)
	}
	select {
	case err := <-background:
		t.Fatalf("background work ran without a background connection: %v", err)
	default:
	}
	release.Do(held.Release)
	if err := <-background; err != nil {
		t.Fatalf("background work once a connection came back: %v", err)
	}
}
