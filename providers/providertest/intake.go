package providertest

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// testDescribed: the platform's description (providers.Platform), which
// is all the rest of the gateway knows of it, holds for the sessions the
// provider starts: their origin is the platform's, its key follows the
// platform's grammar, their tenant is qualified by the platform's name,
// and the address built from the key, if any, is a web address.
func testDescribed(t *testing.T, w *world) {
	d := w.p.Describe()
	if d.Name == "" || d.Label == "" || d.Thread == "" || d.KeyForm == "" || d.Key == nil || len(d.SettingPrefixes) == 0 || d.Setup == "" || d.Docs == "" {
		t.Fatalf("an incomplete description: %+v", d)
	}
	s := w.mentioned()
	if s.Origin == nil || s.Origin.Provider != d.Name {
		t.Fatalf("the session's origin %+v, want provider %s", s.Origin, d.Name)
	}
	if got, err := (providers.Platforms{d}).CheckKey(s.Origin.Key); err != nil || got != d.Name {
		t.Fatalf("the origin key %q against the platform's grammar %s: %q, %v", s.Origin.Key, d.KeyForm, got, err)
	}
	if !strings.HasPrefix(s.Tenant, d.Name+":") || len(s.Tenant) == len(d.Name)+1 {
		t.Fatalf("tenant %q, want %s:<id>", s.Tenant, d.Name)
	}
	if label := (providers.Platforms{d}).MetricsLabel(s); !strings.HasPrefix(label, d.Name+":") {
		t.Fatalf("metrics label %q, want one of the platform's", label)
	}
	if d.KeyURL != nil {
		if u := d.KeyURL(s.Origin.Key); u != "" && !strings.HasPrefix(u, "https://") {
			t.Fatalf("the address of %s is %q", s.Origin.Key, u)
		}
	}
}

// testReplayedDelivery: platforms deliver at least once. A delivery sent
// again, or its message delivered again under another delivery id (the
// one that started the session or a later one), queues nothing more;
// another message does.
func testReplayedDelivery(t *testing.T, w *world) {
	first := w.p.Mention(t, "conformance-1", "look at the widgets")
	w.deliver(first, "the mention")
	w.deliver(first, "the same delivery again")
	s := w.session()
	if n := len(w.pending(s.ID)); n != 1 {
		t.Fatalf("%d inputs for one delivery sent twice, want 1", n)
	}
	w.deliver(w.p.Redeliver(t, first, "conformance-2"), "the message under another delivery id")
	if n := len(w.pending(s.ID)); n != 1 {
		t.Fatalf("%d inputs after the message came again under another delivery id, want 1", n)
	}
	second := w.p.Mention(t, "conformance-3", "and at the gears")
	w.deliver(second, "another mention")
	if n := len(w.pending(s.ID)); n != 2 {
		t.Fatalf("%d inputs after a second message, want 2", n)
	}
	w.deliver(w.p.Redeliver(t, second, "conformance-4"), "the second message under another delivery id")
	if n := len(w.pending(s.ID)); n != 2 {
		t.Fatalf("%d inputs after the second message came again under another delivery id, want 2", n)
	}
	if n := len(w.sessions()); n != 1 {
		t.Fatalf("%d sessions for one conversation", n)
	}
}

// testBadSignature: a delivery whose signature does not cover its body is
// refused (401) before anything is stored, whether it would start a
// session or continue one; the same message as signed is taken, so the
// refusal is the signature's.
func testBadSignature(t *testing.T, w *world) {
	first := w.p.Mention(t, "conformance-1", "look at the widgets")
	if code := w.send(first.Tampered()); code != http.StatusUnauthorized {
		t.Fatalf("a badly signed mention: status %d, want 401", code)
	}
	if n := len(w.sessions()); n != 0 {
		t.Fatalf("a badly signed mention stored %d sessions", n)
	}
	w.deliver(first, "the mention as signed")
	s := w.session()
	next := w.p.Mention(t, "conformance-2", "and at the gears")
	if code := w.send(next.Tampered()); code != http.StatusUnauthorized {
		t.Fatalf("a badly signed reply: status %d, want 401", code)
	}
	if n := len(w.pending(s.ID)); n != 1 {
		t.Fatalf("%d inputs after a badly signed reply, want the mention's only", n)
	}
}

// testOwnMessages: the agent's own messages, delivered back, never start
// a session nor reach one (the loop guard), though they mention it.
func testOwnMessages(t *testing.T, w *world) {
	if lacking(t, w.p, OwnMessages) {
		return
	}
	w.deliver(w.p.Own(t, "conformance-own-1", "I can look at that."), "the agent's own message")
	if n := len(w.sessions()); n != 0 {
		t.Fatalf("the agent's own message started %d sessions", n)
	}
	s := w.mentioned()
	w.deliver(w.p.Own(t, "conformance-own-2", "Done. Reply allow or deny."), "the agent's own reply")
	if n := len(w.pending(s.ID)); n != 1 {
		t.Fatalf("%d inputs after the agent's own reply, want the mention's only", n)
	}
}

// testStop: a person's stop, while a turn runs, queues its interrupt,
// which the commit stream hands the runtime.
func testStop(t *testing.T, w *world) {
	s := w.mentioned()
	w.turn(s.ID)
	w.deliver(w.p.Stop(t), "the stop")
	w.queued(s.ID, core.TypeUserInterrupt)
	if got := w.rt.Stopped(); !slices.Contains(got, s.ID) {
		t.Fatalf("the runtime was asked to interrupt %v, not the session", got)
	}
}

// testRetry: after a turn failed, a person's retry queues a user.retry of
// that turn.
func testRetry(t *testing.T, w *world) {
	s := w.mentioned()
	tn := w.turn(s.ID)
	tn.step(core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "the model is overloaded"}))
	tn.end(core.ReasonError)
	w.settled(s.ID)
	w.deliver(w.p.Retry(t), "the retry")
	var b core.RetryBody
	if err := w.queued(s.ID, core.TypeUserRetry).Decode(&b); err != nil || b.TurnID != tn.id {
		t.Fatalf("retry of %q (%v), want of the failed turn %s", b.TurnID, err, tn.id)
	}
}
