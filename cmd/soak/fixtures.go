package main

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
)

// fixtureTB is the testing.TB the platform fakes take, for a program:
// cleanups run when the soak ends and a fatal error stops it.
type fixtureTB struct {
	// TB is nil: the fakes call only the methods defined below.
	testing.TB
	log *slog.Logger

	mu       sync.Mutex
	cleanups []func()
}

// fatal is the panic a fake's Fatal raises; run recovers it.
type fatal string

func (f *fixtureTB) Helper() {}

func (f *fixtureTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fixtureTB) Logf(format string, args ...any) { f.log.Info(fmt.Sprintf(format, args...)) }
func (f *fixtureTB) Log(args ...any)                 { f.log.Info(fmt.Sprint(args...)) }
func (f *fixtureTB) Fatal(args ...any)               { panic(fatal(fmt.Sprint(args...))) }
func (f *fixtureTB) Fatalf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}
func (f *fixtureTB) Errorf(format string, args ...any) {
	panic(fatal(fmt.Sprintf(format, args...)))
}

// close runs the cleanups, last registered first.
func (f *fixtureTB) close() {
	f.mu.Lock()
	list := f.cleanups
	f.cleanups = nil
	f.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i]()
	}
}
