package webhooks

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// heldRecords is a store whose attempt records wait until release is
// closed.
type heldRecords struct {
	*bolt.Store
	release chan struct{}
	calls   atomic.Int64
}

func (h *heldRecords) RecordAttempts(ctx context.Context, attempts []core.AttemptRecord) ([]core.RecordedAttempt, error) {
	h.calls.Add(1)
	<-h.release
	return h.Store.RecordAttempts(ctx, attempts)
}

// streamEnv makes a service on st (not started) with one destination,
// to rc, and one session.
func streamEnv(t *testing.T, st Store, rc *receiver, cfg Config) (*Service, *core.Session) {
	t.Helper()
	cfg.Store, cfg.Sealer = st, fakeSealer{}
	svc := New(cfg)
	ctx := t.Context()
	nd, created, err := svc.prepare(ctx, "", "", core.DestinationSpec{URL: rc.srv.URL}, core.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateDestination(ctx, nd); err != nil {
		t.Fatal(err)
	}
	rc.setSecret(created.Secret)
	res, err := st.(interface {
		CreateSession(context.Context, core.NewSession) (*core.CreateResult, error)
	}).CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, res.Session
}

func openBolt(t *testing.T) *bolt.Store {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func sayTo(t *testing.T, st *bolt.Store, sessionID string, texts ...string) {
	t.Helper()
	evs := make([]core.Event, len(texts))
	for i, txt := range texts {
		evs[i] = core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: txt})
	}
	if _, err := st.Append(t.Context(), sessionID, core.AppendRequest{Events: evs}); err != nil {
		t.Fatal(err)
	}
}

// TestSendsAheadOfRecords: while a stream's attempts wait for their
// records, its next deliveries go out, in order, up to sendAhead; none is
// shown delivered before its record commits.
func TestSendsAheadOfRecords(t *testing.T) {
	bs := openBolt(t)
	st := &heldRecords{Store: bs, release: make(chan struct{})}
	rc := newReceiver(t)
	svc, sess := streamEnv(t, st, rc, fastConfig())
	want := []string{"a0", "a1", "a2", "a3", "a4"}
	sayTo(t, bs, sess.ID, want...)
	svc.Start(t.Context())
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "the stream sent ahead of its records", func() bool { return len(rc.delivered()) == len(want) })
	if got := texts(rc.delivered()); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	ds, _, err := bs.ListDeliveries(t.Context(), core.DeliveryQuery{State: core.DeliveryDelivered})
	if err != nil || len(ds) != 0 {
		t.Fatalf("delivered before any record: %d, %v", len(ds), err)
	}
	close(st.release)
	waitFor(t, "every attempt recorded", func() bool {
		ds, _, err := bs.ListDeliveries(t.Context(), core.DeliveryQuery{State: core.DeliveryDelivered})
		return err == nil && len(ds) == len(want)
	})
	if n := len(rc.requests()); n != len(want) {
		t.Fatalf("%d requests, want %d", n, len(want))
	}
}

// TestSendAheadBounded: no more than sendAhead attempts of a stream wait
// for their records.
func TestSendAheadBounded(t *testing.T) {
	bs := openBolt(t)
	st := &heldRecords{Store: bs, release: make(chan struct{})}
	rc := newReceiver(t)
	gate := make(chan struct{})
	var seen atomic.Int64
	rc.setAnswer(func(Envelope) int {
		if seen.Add(1) == sendAhead+1 {
			close(gate)
		}
		return 0
	})
	svc, sess := streamEnv(t, st, rc, fastConfig())
	var msgs []string
	for i := range 2 * sendAhead {
		msgs = append(msgs, string(rune('a'+i)))
	}
	sayTo(t, bs, sess.ID, msgs...)
	svc.Start(t.Context())
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "a full window", func() bool { return st.calls.Load() > 0 && len(rc.requests()) >= sendAhead })
	select {
	case <-gate:
		t.Fatalf("%d attempts went out with none recorded; at most %d may", seen.Load(), sendAhead)
	default:
	}
	close(st.release)
	waitFor(t, "the whole stream", func() bool { return len(rc.delivered()) == 2*sendAhead })
}

// TestFailureStopsSendingAhead: a failed attempt holds the stream: what
// is behind it waits for its retry, and arrives in order.
func TestFailureStopsSendingAhead(t *testing.T) {
	bs := openBolt(t)
	rc := newReceiver(t)
	var failed atomic.Bool
	rc.setAnswer(func(e Envelope) int {
		if texts([]Envelope{e})[0] == "a1" && !failed.Swap(true) {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	svc, sess := streamEnv(t, bs, rc, fastConfig())
	sayTo(t, bs, sess.ID, "a0", "a1", "a2", "a3")
	svc.Start(t.Context())
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "every event", func() bool { return len(rc.delivered()) == 4 })
	var got []string
	for _, r := range rc.requests() {
		got = append(got, texts([]Envelope{r.env})[0])
	}
	if want := []string{"a0", "a1", "a1", "a2", "a3"}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// TestPauseStopsSendingAhead: once a destination is paused, no delivery
// is sent ahead of the records in flight (an admin's pause promises no
// other attempt until resume).
func TestPauseStopsSendingAhead(t *testing.T) {
	bs := openBolt(t)
	st := &heldRecords{Store: bs, release: make(chan struct{})}
	rc := newReceiver(t)
	var destination atomic.Value
	rc.setAnswer(func(Envelope) int {
		if _, err := bs.PauseDestination(context.Background(), destination.Load().(string)); err != nil {
			t.Error(err)
		}
		return 0
	})
	svc, sess := streamEnv(t, st, rc, fastConfig())
	ds, _, err := bs.ListDestinations(t.Context(), core.DestinationQuery{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("destinations: %v, %v", ds, err)
	}
	destination.Store(ds[0].ID)
	sayTo(t, bs, sess.ID, "a0", "a1", "a2")
	svc.Start(t.Context())
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "the first attempt's record", func() bool { return st.calls.Load() > 0 })
	close(st.release)
	waitFor(t, "the first delivery recorded", func() bool {
		ds, _, err := bs.ListDeliveries(t.Context(), core.DeliveryQuery{State: core.DeliveryDelivered})
		return err == nil && len(ds) == 1
	})
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("%d requests after the pause, want the 1 under way", n)
	}
}

// failingRecords is a store whose first attempt record fails.
type failingRecords struct {
	*bolt.Store
	failed atomic.Bool
}

func (f *failingRecords) RecordAttempts(ctx context.Context, attempts []core.AttemptRecord) ([]core.RecordedAttempt, error) {
	if !f.failed.Swap(true) {
		return nil, errors.New("disk full")
	}
	return f.Store.RecordAttempts(ctx, attempts)
}

// TestRecordFailureRetriedOnceTheClaimRunsOut: an attempt the store could
// not record leaves its stream claimed until the claim runs out, and
// nothing else wakes the dispatcher in a quiet store: the delivery is
// still sent again then, and recorded.
func TestRecordFailureRetriedOnceTheClaimRunsOut(t *testing.T) {
	bs := openBolt(t)
	st := &failingRecords{Store: bs}
	rc := newReceiver(t)
	cfg := fastConfig()
	cfg.Client = NewClient(ClientOptions{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	cfg.ClaimTTL = 10 * time.Millisecond
	svc, sess := streamEnv(t, st, rc, cfg)
	sayTo(t, bs, sess.ID, "a0")
	svc.Start(t.Context())
	t.Cleanup(func() {
		if err := svc.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "the delivery recorded after the failed record", func() bool {
		ds, _, err := bs.ListDeliveries(t.Context(), core.DeliveryQuery{State: core.DeliveryDelivered})
		return err == nil && len(ds) == 1
	})
	if got := texts(rc.delivered()); len(got) < 2 || got[0] != "a0" || got[len(got)-1] != "a0" {
		t.Fatalf("delivered %v, want a0 sent again after its record failed", got)
	}
}
