package providers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Background runs the work a provider starts after answering a webhook
// (platform calls never delay an ack), each piece bounded to a minute, and
// lets the provider's Stop wait for it.
type Background struct {
	// Logger is where a piece of work that panics is logged (nil: the
	// default logger); the panic ends that piece only.
	Logger *slog.Logger
	wg     sync.WaitGroup
}

// Go runs fn in the background with its own bounded context.
func (b *Background) Go(fn func(ctx context.Context)) {
	b.wg.Go(func() {
		defer core.Recover(b.Logger, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fn(ctx)
	})
}

// Wait waits for the work started so far, or for ctx's end.
func (b *Background) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
