package harness

import (
	"context"
	"reflect"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// sliceLog serves a log held in a slice; only Events is used.
type sliceLog struct {
	Log
	events []core.Event
}

func (l *sliceLog) Events(_ context.Context, _ string, after uint64, _ int) ([]core.Event, error) {
	var out []core.Event
	for _, e := range l.events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, nil
}

// fetcher stands for an attachment store; the view only asks whether
// one is there.
type fetcher struct{}

func (fetcher) FetchAttachments(context.Context, []core.Attachment) ([]core.Attachment, error) {
	return nil, nil
}

// TestEventsReadAsWhole: after every event of a log that keeps calls
// open across turns, answers them late, and fetches attachments, what a
// turn reads from Events (its turn, open calls, stale answers, messages
// to fetch, context) is what it reads from the whole log.
func TestEventsReadAsWhole(t *testing.T) {
	type step struct {
		typ   string
		actor core.Actor
		body  any
	}
	user := func(text string, at ...core.Attachment) step {
		return step{core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: text, Attachments: at}}
	}
	started := step{core.TypeTurnStarted, core.ActorSystem, struct{}{}}
	completed := step{core.TypeTurnCompleted, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}}
	use := func(typ, id string) step {
		return step{typ, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: "deploy", Input: []byte(`{}`)}}
	}
	result := func(id string) step {
		return step{core.TypeAgentToolResult, core.ActorSystem, core.ToolResultBody{ToolUseID: id, Output: "ok"}}
	}
	answer := step{core.TypeAgentMessage, core.ActorAgent, core.MessageBody{Text: "done"}}
	pending := core.Attachment{Name: "a.txt", Size: 3, Source: &core.AttachmentSource{Provider: "slack", Tenant: "T1"}}
	script := []step{
		user("one"), started, use(core.TypeAgentToolUse, "c1"), result("c1"), answer, completed,
		user("two"), started, use(core.TypeAgentCustomToolUse, "c2"), use(core.TypeAgentToolUse, "c3"),
		{core.TypeTurnCompleted, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction}},
		user("aside", core.Attachment{}), user("with a file", pending),
		{core.TypeUserToolConfirmation, core.ActorHuman, core.ToolConfirmationBody{ToolUseID: "c3", Result: "allow"}},
		started, result("c3"), answer, completed,
		user("three"), started, answer, completed,
		{core.TypeUserCustomToolResult, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c2", Output: "late"}},
		{core.TypeUserCustomToolResult, core.ActorHuman, core.CustomToolResultBody{ToolUseID: "c1", Output: "stale"}},
		started, answer,
		{core.TypeAttachmentsFetched, core.ActorSystem, core.AttachmentsFetchedBody{Seq: 13, Attachments: []core.Attachment{{ID: "f1", Name: "a.txt"}}}},
		completed, user("four"), started, answer, completed,
	}
	for _, fetching := range []bool{false, true} {
		log := &sliceLog{}
		c := &Cycle{SessionID: "sesn_a", Epoch: 1, Agent: &core.Agent{ID: "agt_1", Version: 1, System: "sys"}, Log: log}
		if fetching {
			c.Attachments = &Attachments{Fetcher: fetcher{}}
		}
		cs := NewContexts(4)
		turn := ""
		for i, s := range script {
			e := core.NewEvent(s.typ, core.LevelInternal, s.actor, s.body)
			e.ID, e.Seq = core.NewID(core.PrefixEvent), uint64(i+1)
			if s.typ == core.TypeTurnStarted {
				turn = core.NewID(core.PrefixTurn)
			}
			e.TurnID = turn
			log.events = append(log.events, e)
			view, err := cs.Events(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			whole := log.events
			if got, want := turnEvents(view, turn), turnEvents(whole, turn); !reflect.DeepEqual(got, want) {
				t.Fatalf("fetching %v, after event %d: turn events %v, want %v", fetching, i+1, got, want)
			}
			got, err := openCalls(view)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := openCalls(whole)
			if (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) {
				t.Fatalf("fetching %v, after event %d: open calls %+v, want %+v", fetching, i+1, got, want)
			}
			gotStale, _ := staleAnswers(view)
			wantStale, _ := staleAnswers(whole)
			// What a turn asks of staleness: whether the inputs it just
			// took answer no call.
			if gotStale[e.ID] != wantStale[e.ID] {
				t.Fatalf("fetching %v, after event %d: stale %q, want %q", fetching, i+1, gotStale[e.ID], wantStale[e.ID])
			}
			if fetching {
				if got, want := toFetch(t, view), toFetch(t, whole); !reflect.DeepEqual(got, want) {
					t.Fatalf("after event %d: messages to fetch %v, want %v", i+1, got, want)
				}
			}
			mc, err := cs.Context(context.Background(), c, view)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := Derive(c.Agent.System, whole)
			if !reflect.DeepEqual(mc, full) {
				t.Fatalf("fetching %v, after event %d: context %+v, want %+v", fetching, i+1, mc, full)
			}
		}
	}
}

// toFetch lists the seqs of the messages Fetch would download for.
func toFetch(t *testing.T, events []core.Event) []uint64 {
	t.Helper()
	fetched, err := core.FetchedAttachments(events)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, e := range events {
		if e.Type != core.TypeUserMessage {
			continue
		}
		if _, done := fetched[e.Seq]; done {
			continue
		}
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			t.Fatal(err)
		}
		for _, a := range b.Attachments {
			if a.Pending() {
				out = append(out, e.Seq)
				break
			}
		}
	}
	return out
}
