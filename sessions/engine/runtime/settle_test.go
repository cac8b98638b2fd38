package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// replyAtClearStore queues a reply on a session just before the runtime's
// first clearing of its wake goes through: the reply lands after the
// cycle's turn took the queue, as a click or a thread reply does when it
// races the end of a turn. No commit stream tells the runtime of it, as
// when another replica queued it.
type replyAtClearStore struct {
	*bolt.Store
	session string
	once    sync.Once
	queued  chan struct{}
}

func (s *replyAtClearStore) reply(ctx context.Context, id string) error {
	if id != s.session {
		return nil
	}
	var err error
	s.once.Do(func() {
		_, err = s.Store.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{
			core.NewInput(core.TypeUserMessage, []byte(`{"text":"one more thing"}`)),
		}})
		close(s.queued)
	})
	return err
}

func (s *replyAtClearStore) ClearWake(ctx context.Context, id string, epoch uint64) error {
	if err := s.reply(ctx, id); err != nil {
		return err
	}
	return s.Store.ClearWake(ctx, id, epoch)
}

func (s *replyAtClearStore) ClearWakeUnlessQueued(ctx context.Context, id string, epoch uint64) (bool, error) {
	if err := s.reply(ctx, id); err != nil {
		return false, err
	}
	return s.Store.ClearWakeUnlessQueued(ctx, id, epoch)
}

// TestReplyAtTheEndOfACycleIsNotLost: an input queued just before a cycle
// clears its wake is run, not left queued with its wake cleared. The
// clock never moves, so only the runtime's settling of the cycle can
// bring the session back.
func TestReplyAtTheEndOfACycleIsNotLost(t *testing.T) {
	clock, st, agent := clockedStore(t)
	id := sessionWith(t, st, agent, "first")
	store := &replyAtClearStore{Store: st, session: id, queued: make(chan struct{})}
	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "answer"}
	cycles := make(chan struct{}, 64)
	rt := startClocked(t, runtime.Config{Store: store, Model: model, Workers: 1, Clock: clock,
		AfterCycle: func(string) {
			select {
			case cycles <- struct{}{}:
			default:
			}
		}})
	rt.Wake(id)
	<-store.queued
	s := waitSettled(t, st, cycles, id)
	if s.Turns != 2 {
		t.Fatalf("%d turns, want the first message's and the reply's", s.Turns)
	}
	if got := lastUserText(model.Requests()[len(model.Requests())-1].Messages); got != "one more thing" {
		t.Fatalf("the last model request ends with %q, not the reply", got)
	}
}
