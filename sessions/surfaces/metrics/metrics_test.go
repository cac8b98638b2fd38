package metrics

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

type noCounts struct{}

func (noCounts) CountByStatus(context.Context) (map[core.Status]int, error) { return nil, nil }

func logged(types ...string) []core.Event {
	out := make([]core.Event, len(types))
	for i, typ := range types {
		out[i] = core.Event{Type: typ}
	}
	return out
}

// TestFollowCountsLocalEvents: the events this process committed are
// counted by type; another replica's, announced on the same stream, are
// not, so the fleet's sum counts each event once.
func TestFollowCountsLocalEvents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []core.Change
		want    map[string]float64
	}{
		{"local", []core.Change{
			{SessionID: "ses_1", Events: logged(core.TypeAgentMessage, core.TypeAgentMessage, core.TypeTurnStarted)},
		}, map[string]float64{core.TypeAgentMessage: 2, core.TypeTurnStarted: 1}},
		{"remote", []core.Change{
			{SessionID: "ses_1", Events: logged(core.TypeAgentMessage), Remote: true},
		}, map[string]float64{core.TypeAgentMessage: 0}},
		{"both", []core.Change{
			{SessionID: "ses_1", Events: logged(core.TypeAgentMessage), Remote: true},
			{SessionID: "ses_2", Events: logged(core.TypeAgentMessage, core.TypeTurnCompleted)},
			{SessionID: "ses_1", Events: logged(core.TypeTurnCompleted), Remote: true},
		}, map[string]float64{core.TypeAgentMessage: 1, core.TypeTurnCompleted: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(noCounts{}, slog.New(slog.DiscardHandler))
			commits := core.NewCommits()
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			sub := commits.Subscribe("metrics", 16)
			go func() {
				defer close(done)
				m.Follow(ctx, sub)
			}()
			commits.Publish(tc.changes...)
			// A local change published last marks the end: once it is
			// counted, every change before it was handled.
			commits.Publish(core.Change{SessionID: "ses_end", Events: logged("test.end")})
			deadline := time.Now().Add(time.Minute)
			for eventsCounted(t, m)["test.end"] == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the changes were never counted")
				}
				time.Sleep(time.Millisecond)
			}
			cancel()
			<-done
			counted := eventsCounted(t, m)
			for typ, want := range tc.want {
				if got := counted[typ]; got != want {
					t.Errorf("%s counted %v, want %v", typ, got, want)
				}
			}
		})
	}
}

// eventsCounted reads switchboard_events_total from the registry, by type.
func eventsCounted(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "switchboard_events_total" {
			continue
		}
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "type" {
					out[l.GetValue()] = metric.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
