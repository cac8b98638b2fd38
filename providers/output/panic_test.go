package output_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/providers/output"
)

// panicky is a recorder whose renderer panics once, at the first call
// of a kind, and says for which session.
type panicky struct {
	recorder
	at      string // "received", "render 4" (the event's seq) or "closed"
	once    sync.Once
	tripped string // the session it panicked for
	closed  chan string
}

func (p *panicky) trip(sessionID, at string) {
	if at != p.at {
		return
	}
	p.once.Do(func() {
		p.mu.Lock()
		p.tripped = sessionID
		p.mu.Unlock()
		panic("renderer bug at " + at)
	})
}

func (p *panicky) trippedFor() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tripped
}

func (p *panicky) Received(ctx context.Context, s *core.Session, in []core.Event) error {
	p.trip(s.ID, "received")
	return p.recorder.Received(ctx, s, in)
}

func (p *panicky) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if e.Seq == 4 {
		p.trip(t.Session.ID, "render 4")
	}
	return p.recorder.Render(ctx, t, e)
}

func (p *panicky) Closed(_ context.Context, s *core.Session) error {
	p.trip(s.ID, "closed")
	p.closed <- s.ID
	return nil
}

// TestSinkRecoversARenderersPanic: a renderer that panics while a
// session's output is rendered fails that attempt only: the panic is
// logged once with its stack, the work is retried (the answer is posted
// once, after the panic) or, for showing the session closed, given up as
// a failure of it is; another session's output is rendered meanwhile.
func TestSinkRecoversARenderersPanic(t *testing.T) {
	for _, at := range []string{"received", "render 4", "closed"} {
		t.Run(at, func(t *testing.T) {
			st := openStore(t, t.TempDir())
			logged := panictest.New()
			r := &panicky{at: at, closed: make(chan string, 4)}
			sink := output.New(output.Config{Name: "test", Store: st, Renderer: r, RetryMin: time.Millisecond, Logger: logged.Logger()})
			if err := sink.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sink.Stop(context.Background()) })
			first, second := newSession(t, st, "test"), newSession(t, st, "test")
			if at == "received" {
				// Inputs are acknowledged only while they wait: a turn
				// that takes them first leaves Received nothing to do.
				waitUntil(t, "the inputs acknowledged", func() bool { return r.trippedFor() != "" })
			}
			turn(t, st, first)
			turn(t, st, second)
			// Events without a platform call before a failed pass are
			// rendered again by the next; the answer is rendered once.
			count := func(ev string) int {
				n := 0
				for _, g := range r.got() {
					if g == ev {
						n++
					}
				}
				return n
			}
			waitUntil(t, "both turns rendered", func() bool { return count("6:session.status_changed") == 2 && sink.Settled(t.Context()) })
			if n := count("4:agent.message"); n != 2 {
				t.Fatalf("the answers were rendered %d times, want once each: %v", n, r.got())
			}
			if at == "closed" {
				for _, s := range []string{first, second} {
					if _, err := st.Archive(t.Context(), s); err != nil {
						t.Fatal(err)
					}
				}
				// The panicked one is given up; the other is shown.
				select {
				case got := <-r.closed:
					if got == r.trippedFor() {
						t.Fatalf("%s shown closed after its panic", got)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("the other archive was never shown")
				}
				waitUntil(t, "the sink to let go after the archives", func() bool { return sink.Settled(t.Context()) })
			}
			if r.trippedFor() == "" {
				t.Fatal("the renderer never panicked")
			}
			logged.WantOne(t, "panic_test.go", "session_id="+r.trippedFor())
		})
	}
}
