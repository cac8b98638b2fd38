package core

import (
	"log/slog"
	"runtime/debug"
)

// Recover stops a panic in the work that defers it, so that one
// session's fault ends that session's work and not the gateway: it logs
// the panic once, as "panic" with args, the value and the stack, and sets
// *err (when err is not nil) to ErrPanicked, which the owner of the work
// turns into the work's own failure (a turn's session.error, a delivery's
// failed attempt, …). It must be deferred directly: recover stops a panic
// only there.
//
// The store's committer never defers it: a store that panicked mid-commit
// cannot be trusted, and the process stops.
func Recover(log *slog.Logger, err *error, args ...any) {
	v := recover()
	if v == nil {
		return
	}
	log.Error("panic", append(args, "panic", v, "stack", string(debug.Stack()))...)
	if err != nil {
		*err = ErrPanicked
	}
}
