package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeSender records what a notifier sends; fail refuses the next sends,
// and gate, when set, holds each send until it is given a value.
type fakeSender struct {
	mu    sync.Mutex
	sent  [][]string
	fail  int
	gate  chan struct{}
	calls chan struct{} // one value per call, before the gate
}

func (f *fakeSender) send(ctx context.Context, payloads []string) error {
	if f.calls != nil {
		f.calls <- struct{}{}
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return errors.New("connection refused")
	}
	f.sent = append(f.sent, slices.Clone(payloads))
	return nil
}

func (f *fakeSender) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []string
	for _, b := range f.sent {
		all = append(all, b...)
	}
	return all
}

// waitSent waits until the sender has sent n notices.
func waitSent(t *testing.T, f *fakeSender, n int) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if all := f.all(); len(all) >= n {
			return all
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("sent %d notices, want %d", len(f.all()), n)
	return nil
}

func payloads(from, to int) []string {
	var p []string
	for i := from; i < to; i++ {
		p = append(p, fmt.Sprintf("n%d", i))
	}
	return p
}

func TestNotifier(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	t.Run("in commit order", func(t *testing.T) {
		f := &fakeSender{}
		n := newNotifier(f.send, log, "lag", 1000)
		defer n.close()
		for i := 0; i < 50; i++ {
			n.add(payloads(i*3, i*3+3))
		}
		if got := waitSent(t, f, 150); !slices.Equal(got, payloads(0, 150)) {
			t.Fatalf("sent %v, want n0…n149 in order", got)
		}
	})
	t.Run("a failed send is sent again, once", func(t *testing.T) {
		f := &fakeSender{fail: 3}
		n := newNotifier(f.send, log, "lag", 1000)
		defer n.close()
		n.add(payloads(0, 4))
		n.add(payloads(4, 6))
		got := waitSent(t, f, 6)
		if !slices.Equal(got, payloads(0, 6)) {
			t.Fatalf("sent %v, want n0…n5 once each, in order", got)
		}
	})
	t.Run("too many waiting become one lag notice", func(t *testing.T) {
		f := &fakeSender{gate: make(chan struct{}), calls: make(chan struct{}, 10)}
		n := newNotifier(f.send, log, "lag", 3)
		defer n.close()
		n.add(payloads(0, 1))
		<-f.calls // the first send is under way, held at the gate
		n.add(payloads(1, 6))
		f.gate <- struct{}{}
		<-f.calls
		f.gate <- struct{}{}
		if got := waitSent(t, f, 2); !slices.Equal(got, []string{"n0", "lag"}) {
			t.Fatalf("sent %v, want [n0 lag]", got)
		}
	})
	t.Run("close sends what waits", func(t *testing.T) {
		f := &fakeSender{gate: make(chan struct{}), calls: make(chan struct{}, 10)}
		n := newNotifier(f.send, log, "lag", 1000)
		n.add(payloads(0, 1))
		<-f.calls
		n.add(payloads(1, 3))
		go func() {
			f.gate <- struct{}{}
			<-f.calls
			f.gate <- struct{}{}
		}()
		n.close()
		if got := f.all(); !slices.Equal(got, payloads(0, 3)) {
			t.Fatalf("sent %v before close returned, want n0…n2", got)
		}
		n.add(payloads(3, 4)) // after close: dropped, no panic
	})
}
