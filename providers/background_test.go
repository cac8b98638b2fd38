package providers_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/providers"
)

// TestBackgroundRecoversAPanic: a piece of background work that panics
// ends alone, logged once with its stack; the others run and Wait
// returns.
func TestBackgroundRecoversAPanic(t *testing.T) {
	logged := panictest.New()
	b := &providers.Background{Logger: logged.Logger()}
	var ran atomic.Int32
	b.Go(func(context.Context) { panic("notice bug") })
	b.Go(func(context.Context) { ran.Add(1) })
	if err := b.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 1 {
		t.Fatal("the other piece of work did not run")
	}
	logged.WantOne(t, "background_test.go")
}
