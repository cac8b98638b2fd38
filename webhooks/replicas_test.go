package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestTwoDispatchersOneStore: two dispatchers (as two replicas) deliver
// from one store to one receiver, some attempts failing and retried:
// every event is received with a 2xx once, and each session's in order.
func TestTwoDispatchersOneStore(t *testing.T) {
	e := newEnv(t, fastConfig())
	cfg := fastConfig()
	cfg.Store, cfg.Commits, cfg.Sealer = e.store, e.store, fakeSealer{}
	second := New(cfg)
	second.Start(t.Context())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := second.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	if e.svc.cfg.Holder == second.cfg.Holder {
		t.Fatalf("both dispatchers hold as %s", second.cfg.Holder)
	}
	rc := newReceiver(t)
	seen := map[string]bool{}
	rc.setAnswer(func(env Envelope) int {
		// The first try of every third event fails (the receiver holds
		// its lock while it answers).
		var b core.MessageBody
		_ = env.Event.Decode(&b)
		var n int
		_, _ = fmt.Sscanf(b.Text, "%d", &n)
		if n%3 == 0 && !seen[env.EventID] {
			seen[env.EventID] = true
			return http.StatusServiceUnavailable
		}
		return 0
	})
	d := e.destination("/v1/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	const sessions, events = 4, 12
	var ids []string
	for range sessions {
		ids = append(ids, e.session(nil).ID)
	}
	for i := range events {
		for _, id := range ids {
			e.say(id, fmt.Sprint(i))
		}
	}
	// Recorded after the receiver answered: once all are, every post that
	// will ever be made has arrived.
	waitFor(t, "every delivery recorded", func() bool { return len(e.deliveries("state=delivered")) == sessions*events })
	perSession := map[string][]string{}
	received := map[string]bool{}
	for _, env := range rc.delivered() {
		if received[env.EventID] {
			t.Fatalf("event %s received twice", env.EventID)
		}
		received[env.EventID] = true
		perSession[env.SessionID] = append(perSession[env.SessionID], texts([]Envelope{env})[0])
	}
	want := make([]string, events)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	for _, id := range ids {
		if got := perSession[id]; !slices.Equal(got, want) {
			t.Fatalf("session %s received %v, want %v", id, got, want)
		}
	}
}
