package harness_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// countingLog is a memLog that records what the harness reads of the log.
type countingLog struct {
	*memLog
	mu    sync.Mutex
	after []uint64 // the after of each Events call
	read  int      // events returned in all
}

func (l *countingLog) Events(ctx context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	out, err := l.memLog.Events(ctx, id, after, limit)
	l.mu.Lock()
	l.after = append(l.after, after)
	l.read += len(out)
	l.mu.Unlock()
	return out, err
}

func (l *countingLog) reset() {
	l.mu.Lock()
	l.after, l.read = nil, 0
	l.mu.Unlock()
}

// wholeContext derives the context from the whole log as it is now.
func wholeContext(t *testing.T, l *memLog, system string) *harness.Context {
	t.Helper()
	events, _ := l.Events(context.Background(), "", 0, 0)
	mc, err := harness.Derive(system, events)
	if err != nil {
		t.Fatal(err)
	}
	return mc
}

// TestWakeReadsOnlyNewEvents: once a session's context is kept, a wake
// reads only the events logged after the last one it saw, whatever the
// log's length, and every model request carries the context a full
// derivation of the log gives.
func TestWakeReadsOnlyNewEvents(t *testing.T) {
	e := newEnv(t)
	log := &countingLog{memLog: e.log}
	e.cycle.Log = log
	var mismatch []string
	step := func(s fakemodel.Step) fakemodel.Step {
		s.Before = func(req core.ModelRequest) {
			want := wholeContext(t, e.log, e.cycle.Agent.System)
			if req.System != want.System || !reflect.DeepEqual(req.Messages, want.Messages) {
				mismatch = append(mismatch, fmt.Sprintf("request %d: got %+v, want %+v", len(e.model.Requests()), req.Messages, want.Messages))
			}
		}
		return s
	}
	wake := func(n int) {
		e.model.Push(
			step(fakemodel.Step{Text: "looking", Calls: []core.Block{fakemodel.ToolUse(fmt.Sprintf("say%d", n), "say", `{"text":"on it"}`)}}),
			step(fakemodel.Step{Text: fmt.Sprintf("answer %d", n)}),
		)
		e.say(fmt.Sprintf("question %d", n))
		e.run(t, context.Background())
	}
	for n := range 30 {
		wake(n)
	}
	before := len(e.log.types())
	log.reset()
	wake(30)
	logged := len(e.log.types()) - before
	for _, after := range log.after {
		if after == 0 {
			t.Fatalf("a wake read the whole log (reads after %v)", log.after)
		}
	}
	// Each read returns what was logged since the one before it.
	if log.read > logged {
		t.Fatalf("the wake read %d events, more than the %d it logged", log.read, logged)
	}
	if len(mismatch) > 0 {
		t.Fatalf("contexts differ from a full derivation:\n%s", mismatch[0])
	}
}
