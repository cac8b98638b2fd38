package sessions

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/storetest"
)

func TestOutboxConformance(t *testing.T) {
	storetest.RunDeliveries(t, func(t *testing.T) storetest.DeliveryStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}

// TestOutboxSurvivesReopen proves the queue is durable: what was due
// before a close is due after the reopen, in the same order.
func TestOutboxSurvivesReopen(t *testing.T) {
	s, path := openTemp(t, Options{})
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_a", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	d := core.NewDestination{Destination: core.Destination{ID: core.NewID(core.PrefixDestination), URL: "http://h/x", SessionID: res.Session.ID}}
	if _, err := s.CreateDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	msg := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "x"})
	for range 3 {
		if _, err := s.Append(ctx, res.Session.ID, core.AppendRequest{Events: []core.Event{msg}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var seqs []uint64
	due, _, err := s2.DueDeliveries(ctx, time.Now().Add(time.Second), 10, nil)
	for err == nil && len(due) == 1 {
		seqs = append(seqs, due[0].Seq)
		var next *core.Delivery
		_, next, err = s2.RecordAttempt(ctx, due[0].ID, core.AttemptResult{Success: true, Attempt: core.Attempt{At: core.Now()}})
		due = due[:0]
		if next != nil {
			due = append(due, next)
		}
	}
	if err != nil || len(seqs) != 3 || seqs[0] != 1 || seqs[2] != 3 {
		t.Fatalf("after reopen delivered %v, err %v", seqs, err)
	}
}
