package acpclient

import (
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

func TestRecorderLogsStreamedText(t *testing.T) {
	var logged []core.Event
	rec := newRecorder(func(evs ...core.Event) error { logged = append(logged, evs...); return nil }, 0)
	rec.deltaEvery = time.Second
	clock := time.Unix(1_800_000_000, 0)
	rec.now = func() time.Time { return clock }
	chunk := func(after time.Duration, text string) {
		clock = clock.Add(after)
		rec.update(acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.TextBlock(text)}})
	}
	chunk(0, "Mondays ")                     // starts the clock
	chunk(500*time.Millisecond, "break ")    // too soon
	chunk(600*time.Millisecond, "because")   // a delta of all so far
	chunk(500*time.Millisecond, " the cron") // too soon again
	rec.update(acp.SessionUpdate{ToolCall: &acp.SessionUpdateToolCall{ToolCallId: "c1", Title: "read"}})
	chunk(0, "Fixed.")
	chunk(2*time.Second, " Done.") // a new run: its own response
	rec.end("", core.LevelUser)

	var deltas []core.MessageDeltaBody
	var messages []string
	for _, e := range logged {
		switch e.Type {
		case core.TypeAgentMessageDelta:
			var b core.MessageDeltaBody
			if err := e.Decode(&b); err != nil || e.Level != core.LevelProgress {
				t.Fatalf("delta %+v: %v", e, err)
			}
			deltas = append(deltas, b)
		case core.TypeAgentMessage:
			var b core.MessageBody
			_ = e.Decode(&b)
			messages = append(messages, b.Text)
		}
	}
	if len(deltas) != 2 || deltas[0].Text != "Mondays break because" || deltas[1].Text != "Fixed. Done." {
		t.Fatalf("deltas %+v", deltas)
	}
	if deltas[0].Response == "" || deltas[0].Response == deltas[1].Response {
		t.Fatalf("runs share a response id: %+v", deltas)
	}
	if len(messages) != 2 || messages[0] != "Mondays break because the cron" || messages[1] != "Fixed. Done." {
		t.Fatalf("messages %q", messages)
	}
}

func TestRecorderWithoutDeltas(t *testing.T) {
	var logged []core.Event
	rec := newRecorder(func(evs ...core.Event) error { logged = append(logged, evs...); return nil }, 0)
	for range 3 {
		rec.update(acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.TextBlock("word ")}})
	}
	rec.end("", core.LevelUser)
	for _, e := range logged {
		if e.Type == core.TypeAgentMessageDelta {
			t.Fatal("a delta logged with deltaEvery 0")
		}
	}
}
