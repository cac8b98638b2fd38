package live

import (
	"context"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// logReader is a session log in memory.
type logReader []core.Event

func (l logReader) Events(_ context.Context, _ string, after uint64, limit int) ([]core.Event, error) {
	var out []core.Event
	for _, e := range l {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func logOf(n int) logReader {
	var l logReader
	for i := range n {
		e := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "m"})
		e.Seq, e.SessionID = uint64(i+1), "ses_1"
		l = append(l, e)
	}
	return l
}

func seqs(frames []Frame) []uint64 {
	var out []uint64
	for _, f := range frames {
		out = append(out, f.Event.Seq)
	}
	return out
}

// TestNextTakesWhatWaits: the live frames waiting when a follower looks
// come back together, one write and one flush for the stream; a gap
// among them is read from the store.
func TestNextTakesWhatWaits(t *testing.T) {
	log := logOf(4)
	for _, tc := range []struct {
		name      string
		published []core.Event
		want      []uint64
	}{
		{"in order", log[:3], []uint64{1, 2, 3}},
		{"a gap", []core.Event{log[0], log[2], log[3]}, []uint64{1, 2, 3, 4}},
		{"repeats skipped", []core.Event{log[0], log[0], log[1]}, []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub()
			f := Follow(h, log, "ses_1", 0, 16)
			defer f.Close()
			for _, e := range tc.published {
				h.Publish("ses_1", []core.Event{e})
			}
			got, err := f.Next(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seqs(got), tc.want) {
				t.Fatalf("Next = %v, want %v", seqs(got), tc.want)
			}
			if f.Last() != tc.want[len(tc.want)-1] {
				t.Fatalf("Last = %d", f.Last())
			}
		})
	}
}
