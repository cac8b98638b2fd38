package playground

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/switchboardhq/switchboard/fixtures/tb"
)

// process stands in for a test where the fakes expect one: they register
// their cleanups with it and report through it. A fake's fatal error
// panics, which ends the playground's set-up with the message (Run
// recovers it) and, in a request's handler, that request alone.
type process struct {
	log *slog.Logger
	dir string // the playground's data directory; TempDir makes room in it

	mu       sync.Mutex
	cleanups []func()
}

var _ tb.TB = (*process)(nil)

func (p *process) Helper() {}

func (p *process) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

func (p *process) Fatal(args ...any) { p.fail(fmt.Sprint(args...)) }

func (p *process) Fatalf(format string, args ...any) { p.fail(fmt.Sprintf(format, args...)) }

func (p *process) fail(msg string) {
	p.log.Error("simulator failed", "err", msg)
	panic(fatal(msg))
}

// fatal is the panic of a fake's fatal error.
type fatal string

func (p *process) Logf(format string, args ...any) { p.log.Debug(fmt.Sprintf(format, args...)) }

func (p *process) TempDir() string {
	dir, err := os.MkdirTemp(p.dir, "fake-")
	if err != nil {
		p.Fatalf("temporary directory: %v", err)
	}
	return dir
}

// close runs the cleanups, the last registered first, as a test does.
func (p *process) close() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
}
