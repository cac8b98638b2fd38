package core

import (
	"log/slog"
	"os"
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
// A store's commit defers Crash instead: a panic there stops the process.
func Recover(log *slog.Logger, err *error, args ...any) {
	v := recover()
	if v == nil {
		return
	}
	if log == nil {
		log = slog.Default() // a panic is never dropped unlogged
	}
	log.Error("panic", append(args, "panic", v, "stack", string(debug.Stack()))...)
	if err != nil {
		*err = ErrPanicked
	}
}

// Crash, deferred by a store's commit, stops the process on a panic
// there even when the caller recovers panics (Recover): a commit that
// panicked may have left the store half written or its commit stream
// unpublished, and the store cannot be trusted after that. It logs the
// panic with its stack and exits with status 2, as an unrecovered panic
// does; a supervisor restarts the process, which recovers from the log.
func Crash(log *slog.Logger, args ...any) {
	v := recover()
	if v == nil {
		return
	}
	log.Error("panic in the store's commit; stopping the process", append(args, "panic", v, "stack", string(debug.Stack()))...)
	os.Exit(2)
}
