package webhooks

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
)

// panickyTransport panics on its first round trip, then sends as the
// default transport does.
type panickyTransport struct{ tripped atomic.Bool }

func (p *panickyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.tripped.CompareAndSwap(false, true) {
		panic("transport bug")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDeliveryPanicIsAFailedAttempt: a panic while a delivery is sent
// is that attempt's failure: logged once with its stack, recorded as an
// "internal error", and tried again after its backoff, which delivers
// it; the dispatcher delivers the other session's event meanwhile.
func TestDeliveryPanicIsAFailedAttempt(t *testing.T) {
	logged := panictest.New()
	cfg := fastConfig()
	cfg.Client, cfg.Logger = &http.Client{Transport: &panickyTransport{}}, logged.Logger()
	e := newEnv(t, cfg)
	rc := newReceiver(t)
	d := e.destination("/v1/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	first := e.session(nil)
	e.say(first.ID, "first")
	waitFor(t, "the delivery after the panic", func() bool { return len(e.deliveries("state=delivered")) == 1 })
	second := e.session(nil)
	e.say(second.ID, "second")
	waitFor(t, "the next delivery", func() bool { return len(e.deliveries("state=delivered")) == 2 })

	var dl core.Delivery
	for _, x := range e.deliveries("destination=" + d.ID) {
		if x.SessionID == first.ID {
			dl = x
		}
	}
	if dl.AttemptCount != 2 || dl.Attempts[0].Error != "internal error" || dl.Attempts[1].StatusCode != http.StatusNoContent {
		t.Fatalf("the delivery's attempts: %+v", dl.Attempts)
	}
	logged.WantOne(t, "panic_test.go", "delivery_id="+dl.ID, "session_id="+first.ID)
	if got := len(rc.delivered()); got != 2 {
		t.Fatalf("%d deliveries received, want 2", got)
	}
}
