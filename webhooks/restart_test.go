package webhooks

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestStopLeavesAttemptDue: an attempt cut short by Stop is not recorded
// (no failure is invented) and the next service on the same store
// delivers it.
func TestStopLeavesAttemptDue(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	hang := make(chan struct{})
	arrived := make(chan struct{}, 10)
	gaveUp := make(chan struct{}, 10)
	rc.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read first: the server notices a closed connection only once
		// the body is consumed.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		arrived <- struct{}{}
		select {
		case <-hang:
			rc.serve(w, r)
		case <-r.Context().Done(): // the sender gave up: nothing arrived
			gaveUp <- struct{}{}
		}
	})
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	e.say(sess.ID, "in flight", "queued")
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dl := range e.deliveries("destination=" + d.ID) {
		if dl.State != core.DeliveryPending || dl.AttemptCount != 0 {
			t.Fatalf("after stop: %+v", dl)
		}
	}
	<-gaveUp
	close(hang)
	cfg := fastConfig()
	cfg.Store, cfg.Sealer = e.store, fakeSealer{}
	next := New(cfg)
	next.Start(context.Background())
	defer func() { _ = next.Stop(ctx) }()
	waitFor(t, "delivery by the next service", func() bool { return len(rc.delivered()) == 2 })
	if got := texts(rc.delivered()); got[0] != "in flight" || got[1] != "queued" {
		t.Fatalf("delivered %v", got)
	}
}
