package webhooks

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestSpecTestVector signs the Standard Webhooks spec's example with the
// signer deliveries use and gets the published signature.
func TestSpecTestVector(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	if err := CheckSecret(secret); err != nil {
		t.Fatalf("the spec's secret is refused: %v", err)
	}
	wh, err := signer(secret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wh.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestEveryDeliveryVerifies: a receiver on the library's Verify accepts
// every delivery; the envelope carries the event, its ids and the
// session's metadata unchanged; webhook-id is the event id.
func TestEveryDeliveryVerifies(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	meta := map[string]string{"ticket": "T-1", "quote": `a "b" <c> & ü 💡`, "empty": ""}
	sess := e.session(meta)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL + "/hook?x=1"})
	if !strings.HasPrefix(d.Secret, "whsec_") || d.SessionID != sess.ID || d.Status != core.DestinationActive {
		t.Fatalf("created = %+v", d)
	}
	rc.setSecret(d.Secret)
	logged := e.say(sess.ID, "one", "two", "three")
	waitFor(t, "three deliveries", func() bool { return len(rc.delivered()) == 3 })
	for i, r := range rc.requests() {
		if r.verified != nil {
			t.Fatalf("delivery %d does not verify: %v", i, r.verified)
		}
		ev := logged[i]
		if r.id != ev.ID || r.env.EventID != ev.ID || r.env.SessionID != sess.ID || r.env.Type != core.TypeAgentMessage ||
			r.env.Event.Seq != ev.Seq || r.env.Event.ID != ev.ID {
			t.Fatalf("delivery %d = %+v, want event %+v", i, r, ev)
		}
		if fmt.Sprint(r.env.Metadata) != fmt.Sprint(meta) || len(r.env.Metadata) != len(meta) {
			t.Fatalf("metadata %v, want %v", r.env.Metadata, meta)
		}
	}
	// The secret is never shown again.
	var got map[string]any
	e.call("GET", "/v1/destinations/"+d.ID, nil, &got)
	if _, ok := got["secret"]; ok || got["id"] != d.ID {
		t.Fatalf("get destination = %v", got)
	}
	waitFor(t, "delivered state", func() bool {
		ds := e.deliveries("destination=" + d.ID + "&state=delivered")
		return len(ds) == 3 && ds[0].AttemptCount == 1 && ds[0].Attempts[0].StatusCode == 204
	})
}

// TestCallerSecretSigns: a secret given at create is used and not echoed.
func TestCallerSecretSigns(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	rc.setSecret(secret)
	sess := e.session(nil)
	d := e.destination("/v1/destinations", map[string]any{"url": rc.srv.URL, "secret": secret})
	if d.Secret != "" {
		t.Fatalf("a caller's secret was echoed: %+v", d)
	}
	e.say(sess.ID, "hello")
	waitFor(t, "a delivery", func() bool { return len(rc.requests()) == 1 })
	if r := rc.requests()[0]; r.verified != nil || r.status != 204 {
		t.Fatalf("request = %+v", r)
	}
}

// TestReceiverDownThenUp: while the receiver fails, deliveries back off;
// once it answers, every event arrives, in order per session, each with
// its event id on every try.
func TestReceiverDownThenUp(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	rc.setAnswer(func(Envelope) int { return http.StatusServiceUnavailable })
	d := e.destination("/v1/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	a, b := e.session(nil), e.session(nil)
	for i := range 5 {
		e.say(a.ID, fmt.Sprintf("a%d", i))
		e.say(b.ID, fmt.Sprintf("b%d", i))
	}
	waitFor(t, "retries while down", func() bool { return len(rc.requests()) >= 10 })
	rc.setAnswer(nil)
	waitFor(t, "every event", func() bool { return len(rc.delivered()) == 10 })
	// Once the store has every delivery delivered, no attempt is left to
	// make or in flight: nothing more may come.
	waitFor(t, "every delivery marked delivered", func() bool { return len(e.deliveries("state=delivered")) == 10 })
	got := rc.delivered()
	if len(got) != 10 {
		t.Fatalf("%d deliveries after the receiver came back, want 10", len(got))
	}
	perSession := map[string][]string{}
	for _, env := range got {
		perSession[env.SessionID] = append(perSession[env.SessionID], texts([]Envelope{env})[0])
	}
	if !slices.Equal(perSession[a.ID], []string{"a0", "a1", "a2", "a3", "a4"}) || !slices.Equal(perSession[b.ID], []string{"b0", "b1", "b2", "b3", "b4"}) {
		t.Fatalf("out of order: %v", perSession)
	}
	idOf := map[string]string{} // event id → the webhook-id every try carried
	for _, r := range rc.requests() {
		if r.verified != nil {
			t.Fatalf("a try did not verify: %v", r.verified)
		}
		if prev, ok := idOf[r.env.EventID]; (ok && prev != r.id) || r.id != r.env.EventID {
			t.Fatalf("event %s sent with webhook-id %s and %s", r.env.EventID, prev, r.id)
		}
		idOf[r.env.EventID] = r.id
	}
	if len(idOf) != 10 {
		t.Fatalf("%d distinct events, want 10", len(idOf))
	}
	ds := e.deliveries("destination=" + d.ID)
	for _, dl := range ds {
		if dl.State != core.DeliveryDelivered || dl.AttemptCount < 1 || dl.Attempts[len(dl.Attempts)-1].StatusCode != 204 {
			t.Fatalf("delivery = %+v", dl)
		}
	}
	if ds[0].AttemptCount < 2 || ds[0].Attempts[0].StatusCode != 503 {
		t.Fatalf("the first delivery shows no failed attempt: %+v", ds[0])
	}
}

// deadAddr is a loopback address nothing listens on: a socket bound to
// it and never listening holds the port until the test ends, so every
// connection is refused and no one else can take the port meanwhile.
func deadAddr(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// TestNeverReturnsEndsDead: a receiver that never comes back leaves the
// delivery dead after the horizon, with every attempt listed.
func TestNeverReturnsEndsDead(t *testing.T) {
	cfg := fastConfig()
	cfg.Horizon = 150 * time.Millisecond
	e := newEnv(t, cfg)
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": "http://" + deadAddr(t) + "/"})
	e.say(sess.ID, "lost", "also lost")
	waitFor(t, "dead letters", func() bool { return len(e.deliveries("state=dead&destination="+d.ID)) == 2 })
	for _, dl := range e.deliveries("destination=" + d.ID) {
		last := dl.Attempts[len(dl.Attempts)-1]
		if dl.AttemptCount < 2 || last.StatusCode != 0 || !strings.Contains(last.Error, "connect") || dl.NextAttemptAt != nil {
			t.Fatalf("dead delivery = %+v", dl)
		}
		if span := dl.Attempts[len(dl.Attempts)-1].At.Sub(dl.FirstAttemptAt.Time); span < cfg.Horizon-time.Millisecond {
			t.Fatalf("dead after %v, before the horizon %v", span, cfg.Horizon)
		}
	}
}

// TestDeadLetterDoesNotBlockAndRedelivers: one event the receiver keeps
// refusing goes dead, the ones behind it arrive, and a redelivery brings
// it once the receiver takes it.
func TestDeadLetterDoesNotBlockAndRedelivers(t *testing.T) {
	cfg := fastConfig()
	cfg.Horizon = 100 * time.Millisecond
	e := newEnv(t, cfg)
	rc := newReceiver(t)
	var refuse atomic.Value
	refuse.Store("poison")
	rc.setAnswer(func(env Envelope) int {
		if texts([]Envelope{env})[0] == refuse.Load().(string) {
			return http.StatusInternalServerError
		}
		return 0
	})
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	e.say(sess.ID, "first", "poison", "after1", "after2")
	waitFor(t, "the events behind the dead one", func() bool { return len(rc.delivered()) == 3 })
	if got := texts(rc.delivered()); !slices.Equal(got, []string{"first", "after1", "after2"}) {
		t.Fatalf("delivered %v", got)
	}
	dead := e.deliveries("state=dead&destination=" + d.ID)
	if len(dead) != 1 || dead[0].Seq != 2 {
		t.Fatalf("dead = %+v", dead)
	}
	var dl core.Delivery
	if code := e.call("POST", "/v1/deliveries/"+dead[0].ID+"/redeliver", nil, &dl); code != http.StatusAccepted || dl.State != core.DeliveryPending {
		t.Fatalf("redeliver: %d %+v", code, dl)
	}
	if code := e.call("POST", "/v1/deliveries/"+dead[0].ID+"/redeliver", nil, nil); code != http.StatusConflict {
		t.Fatalf("second redeliver: %d", code)
	}
	refuse.Store("nothing")
	waitFor(t, "the redelivery", func() bool { return len(rc.delivered()) == 4 })
	last := rc.delivered()[3]
	if texts([]Envelope{last})[0] != "poison" || last.EventID != dead[0].EventID {
		t.Fatalf("redelivered %+v", last)
	}
	waitFor(t, "delivered state", func() bool {
		var got core.Delivery
		e.call("GET", "/v1/deliveries/"+dead[0].ID, nil, &got)
		return got.State == core.DeliveryDelivered
	})
}

// TestRetryDueAtOnceSendsNothingTwice: a failure whose retry is due by
// the time it is recorded is retried by the same worker, and the events
// queued behind it, read ahead before the failure, are each sent once
// and in order, whether the retries succeed or the delivery goes dead.
func TestRetryDueAtOnceSendsNothingTwice(t *testing.T) {
	for _, tc := range []struct {
		name     string
		horizon  time.Duration
		refusals int32 // of "flaky"
		want     []string
	}{
		{"the retry succeeds", time.Minute, 2, []string{"first", "flaky", "after1", "after2"}},
		{"the delivery goes dead", 20 * time.Millisecond, math.MaxInt32, []string{"first", "after1", "after2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastConfig()
			cfg.Horizon = tc.horizon
			cfg.Jitter = func(int64) int64 { return 0 } // every retry is due at once
			e := newEnv(t, cfg)
			rc := newReceiver(t)
			var refused atomic.Int32
			rc.setAnswer(func(env Envelope) int {
				if texts([]Envelope{env})[0] == "flaky" && refused.Add(1) <= tc.refusals {
					return http.StatusServiceUnavailable
				}
				return 0
			})
			sess := e.session(nil)
			d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
			rc.setSecret(d.Secret)
			e.say(sess.ID, "first", "flaky", "after1", "after2")
			waitFor(t, "every delivery settled", func() bool {
				return len(e.deliveries("state=pending&destination="+d.ID)) == 0
			})
			if got := texts(rc.delivered()); !slices.Equal(got, tc.want) {
				t.Fatalf("delivered %v, want %v: each once, in order", got, tc.want)
			}
			for _, dl := range e.deliveries("destination=" + d.ID) {
				if dl.Seq != 2 && dl.AttemptCount != 1 {
					t.Fatalf("delivery of seq %d made %d attempts, want 1", dl.Seq, dl.AttemptCount)
				}
			}
		})
	}
}

// TestPauseAndResume: a destination failing longer than PauseAfter is
// paused (no attempts), keeps queueing, and a resume continues from where
// it stopped.
func TestPauseAndResume(t *testing.T) {
	cfg := fastConfig()
	cfg.PauseAfter = 60 * time.Millisecond
	e := newEnv(t, cfg)
	rc := newReceiver(t)
	rc.setAnswer(func(Envelope) int { return http.StatusBadGateway })
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	e.say(sess.ID, "one", "two")
	var got core.Destination
	waitFor(t, "the pause", func() bool {
		e.call("GET", "/v1/destinations/"+d.ID, nil, &got)
		return got.Status == core.DestinationPaused
	})
	if got.PausedAt == nil || got.FailingSince == nil {
		t.Fatalf("paused = %+v", got)
	}
	before := len(rc.requests())
	e.say(sess.ID, "three")
	if n := len(e.deliveries("state=pending&destination=" + d.ID)); n != 3 {
		t.Fatalf("%d pending while paused, want 3", n)
	}
	// What the dispatcher is handed: none of the paused destination's
	// deliveries is due, even an hour from now.
	due, _, err := e.store.ClaimDeliveries(t.Context(), "run_test", time.Minute, time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, dl := range due {
		if dl.DestinationID == d.ID {
			t.Fatalf("a paused destination's delivery is due: %+v", dl)
		}
	}
	if n := len(rc.requests()); n != before {
		t.Fatalf("%d attempts while paused", n-before)
	}
	rc.setAnswer(nil)
	got = core.Destination{}
	if code := e.call("POST", "/v1/destinations/"+d.ID+"/resume", nil, &got); code != 200 || got.Status != core.DestinationActive || got.PausedAt != nil || got.FailingSince != nil {
		t.Fatalf("resume: %d %+v", code, got)
	}
	waitFor(t, "deliveries after resume", func() bool { return len(rc.delivered()) == 3 })
	if got := texts(rc.delivered()); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("after resume %v", got)
	}
}

// TestPauseByHand: a destination paused through the API gets no
// attempt, its events keep queueing, and a resume delivers them in order.
func TestPauseByHand(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
	rc.setSecret(d.Secret)
	e.say(sess.ID, "one")
	waitFor(t, "the first delivery recorded", func() bool { return len(e.deliveries("state=delivered&destination="+d.ID)) == 1 })
	var got core.Destination
	if code := e.call("POST", "/v1/destinations/"+d.ID+"/pause", nil, &got); code != 200 || got.Status != core.DestinationPaused {
		t.Fatalf("pause: %d %+v", code, got)
	}
	e.say(sess.ID, "two", "three")
	if n := len(e.deliveries("state=pending&destination=" + d.ID)); n != 2 {
		t.Fatalf("%d pending while paused, want 2", n)
	}
	due, _, err := e.store.ClaimDeliveries(t.Context(), "run_test", time.Minute, time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Fatalf("a paused destination's deliveries are due: %+v", due)
	}
	if code := e.call("POST", "/v1/destinations/"+d.ID+"/resume", nil, &got); code != 200 || got.Status != core.DestinationActive {
		t.Fatalf("resume: %d %+v", code, got)
	}
	waitFor(t, "deliveries after resume", func() bool { return len(rc.delivered()) == 3 })
	if got := texts(rc.delivered()); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("after resume %v", got)
	}
}

// TestFilters: the level is a threshold, types narrow it, an agent filter
// limits a global destination, and a destination sees only what was
// appended after its creation.
func TestFilters(t *testing.T) {
	e := newEnv(t, fastConfig())
	rc := newReceiver(t)
	mine := e.session(nil)
	e.say(mine.ID, "before")
	other, err := e.store.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_other", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := e.store.CreateAgent(t.Context(), &core.Agent{Name: "filtered", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	forAgent, err := e.store.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	dests := map[string]core.CreatedDestination{
		"user":     e.destination("/v1/sessions/"+mine.ID+"/destinations", map[string]any{"url": rc.srv.URL + "/user", "level": "user"}),
		"progress": e.destination("/v1/sessions/"+mine.ID+"/destinations", map[string]any{"url": rc.srv.URL + "/progress", "level": "progress"}),
		"typed":    e.destination("/v1/sessions/"+mine.ID+"/destinations", map[string]any{"url": rc.srv.URL + "/typed", "types": []string{"turn.started", "agent.tool_use"}}),
		"agent":    e.destination("/v1/destinations", map[string]any{"url": rc.srv.URL + "/agent", "agent": "filtered", "level": "user"}),
	}
	if dests["agent"].AgentID != agent.ID {
		t.Fatalf("agent filter = %+v", dests["agent"])
	}
	paths := map[string]string{}
	for name, d := range dests {
		paths[d.ID] = name
	}
	tool := core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "t1", Name: "bash", Input: []byte(`{}`)})
	started := core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})
	for _, id := range []string{mine.ID, other.Session.ID, forAgent.Session.ID} {
		msg := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "answer"})
		if _, err := e.store.Append(t.Context(), id, core.AppendRequest{Events: []core.Event{started, tool, msg}}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"user":     {"agent.message"},
		"progress": {"agent.tool_use", "agent.message"},
		"typed":    {"turn.started", "agent.tool_use"},
		"agent":    {"agent.message"},
	}
	waitFor(t, "filtered deliveries", func() bool { return len(rc.delivered()) == 6 })
	// Deliveries are queued in the transaction that logs their event: the
	// list is complete now.
	got := map[string][]string{}
	for _, dl := range e.deliveries("") {
		got[paths[dl.DestinationID]] = append(got[paths[dl.DestinationID]], dl.EventType)
		if name := paths[dl.DestinationID]; name != "agent" && dl.SessionID != mine.ID || name == "agent" && dl.SessionID != forAgent.Session.ID {
			t.Fatalf("delivery to %s of session %s", name, dl.SessionID)
		}
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Fatalf("%s received %v, want %v (all: %v)", name, got[name], w, got)
		}
	}
}

// TestPrivateHostnameRefused: with the default guard, a hostname that
// resolves to loopback is refused at connect time, and so are redirects.
func TestPrivateHostnameRefused(t *testing.T) {
	cfg := fastConfig()
	cfg.AllowPrivate = false
	cfg.Client = NewClient(ClientOptions{Timeout: 2 * time.Second})
	cfg.Horizon = 100 * time.Millisecond
	e := newEnv(t, cfg)
	rc := newReceiver(t)
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	sess := e.session(nil)
	var errBody struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	if code := e.call("POST", "/v1/destinations", map[string]any{"url": "http://127.0.0.1:" + port}, &errBody); code != 400 || !strings.Contains(errBody.Error.Message, "loopback") {
		t.Fatalf("literal loopback: %d %+v", code, errBody)
	}
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": "http://localhost:" + port + "/"})
	e.say(sess.ID, "must not arrive")
	waitFor(t, "the refusal", func() bool { return len(e.deliveries("state=dead&destination="+d.ID)) == 1 })
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
	dl := e.deliveries("destination=" + d.ID)[0]
	if err := dl.Attempts[0].Error; !strings.Contains(err, "loopback address") || !strings.Contains(err, "refused") {
		t.Fatalf("attempt error %q", err)
	}
}

// TestRedirectNotFollowed: a 3xx is a failed attempt, not a hop.
func TestRedirectNotFollowed(t *testing.T) {
	cfg := fastConfig()
	cfg.Horizon = 50 * time.Millisecond
	e := newEnv(t, cfg)
	target := newReceiver(t)
	rc := newReceiver(t)
	rc.srv.Config.Handler = http.RedirectHandler(target.srv.URL, http.StatusTemporaryRedirect)
	sess := e.session(nil)
	d := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": rc.srv.URL})
	e.say(sess.ID, "x")
	waitFor(t, "dead", func() bool { return len(e.deliveries("state=dead&destination="+d.ID)) == 1 })
	dl := e.deliveries("destination=" + d.ID)[0]
	if dl.Attempts[0].StatusCode != http.StatusTemporaryRedirect || !strings.Contains(dl.Attempts[0].Error, "not followed") || len(target.requests()) != 0 {
		t.Fatalf("attempt %+v; the redirect target got %d", dl.Attempts[0], len(target.requests()))
	}
}
