package core

import "context"

type foregroundKey struct{}

// Foreground marks ctx as serving a request someone waits on (a webhook
// to ack, an API call): a store shared by busy replicas serves such work
// ahead of background work (turns, output, deliveries), so acks stay
// prompt while a replica is busy.
func Foreground(ctx context.Context) context.Context {
	return context.WithValue(ctx, foregroundKey{}, true)
}

// IsForeground reports whether ctx was marked by Foreground.
func IsForeground(ctx context.Context) bool {
	v, _ := ctx.Value(foregroundKey{}).(bool)
	return v
}
