package harness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
)

// deltas returns the logged agent.message_delta bodies.
func (m *memLog) deltas(t *testing.T) []core.MessageDeltaBody {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.MessageDeltaBody
	for _, e := range m.events {
		if e.Type != core.TypeAgentMessageDelta {
			continue
		}
		if e.Level != core.LevelProgress {
			t.Fatalf("delta at level %s, want progress", e.Level)
		}
		var b core.MessageDeltaBody
		if err := e.Decode(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// waitDeltas waits until n deltas are logged, woken by each append.
func waitDeltas(t *testing.T, l *memLog, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		appended := l.next()
		if len(l.deltas(t)) >= n {
			return
		}
		select {
		case <-appended:
		case <-timeout:
			t.Fatalf("%d deltas logged, want %d", len(l.deltas(t)), n)
		}
	}
}

func TestStreamedTextIsLoggedAsDeltas(t *testing.T) {
	chunks := []string{"Mondays ", "break because ", "the cron job runs at 00:00."}
	var e *env
	e = newEnv(t, fakemodel.Step{
		Text: strings.Join(chunks, ""),
		Before: func(req core.ModelRequest) {
			if req.OnText == nil {
				t.Error("no OnText on the model request")
				return
			}
			// Each chunk is logged before the next streams; the last one
			// is not waited for: the answer carries it.
			for i, c := range chunks {
				req.OnText(c)
				if i < len(chunks)-1 {
					waitDeltas(t, e.log, i+1)
				}
			}
		},
	})
	e.h.TextEvery = time.Millisecond
	e.say("what breaks on Mondays?")
	e.run(t, context.Background())

	got := e.log.deltas(t)
	if len(got) < 2 {
		t.Fatalf("%d deltas, want at least 2", len(got))
	}
	var text strings.Builder
	for _, d := range got {
		if d.Response == "" || d.Response != got[0].Response {
			t.Fatalf("deltas of one response carry responses %q and %q", got[0].Response, d.Response)
		}
		text.WriteString(d.Text)
	}
	answer := strings.Join(chunks, "")
	if !strings.HasPrefix(answer, text.String()) || text.Len() < len(chunks[0])+len(chunks[1]) {
		t.Fatalf("deltas say %q; the answer is %q", text.String(), answer)
	}
	types := e.log.types()
	last := -1
	for i, typ := range types {
		if typ == core.TypeAgentMessageDelta {
			last = i
		}
	}
	if last < 0 || types[last+1] != core.TypeAgentMessage {
		t.Fatalf("log %v: the answer must follow the last delta", types)
	}
	var b core.MessageBody
	if err := e.log.last(core.TypeAgentMessage).Decode(&b); err != nil || b.Text != answer {
		t.Fatalf("answer %q (%v), want %q", b.Text, err, answer)
	}
}

func TestNoDeltasUnlessAsked(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Text: "hi", Before: func(req core.ModelRequest) {
		if req.OnText != nil {
			t.Error("OnText set with TextEvery 0: the client would stream for nobody")
		}
	}})
	e.say("hello")
	e.run(t, context.Background())
	if n := len(e.log.deltas(t)); n != 0 {
		t.Fatalf("%d deltas logged with TextEvery 0", n)
	}
}
