package harness

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestContextTalliesAsAWalk: what a context keeps as blocks are added
// (the bytes EstimateTokens counts, where its first attachment is) is
// what a walk of its messages finds, after every event, whether the
// context was carried on or derived afresh.
func TestContextTalliesAsAWalk(t *testing.T) {
	event := func(typ string, actor core.Actor, body any) core.Event {
		return core.NewEvent(typ, core.LevelUser, actor, body)
	}
	script := []core.Event{
		event(core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: "hello"}),
		event(core.TypeAgentToolUse, core.ActorAgent, core.ToolUseBody{ToolUseID: "c1", Name: "read", Input: []byte(`{"path":"a"}`)}),
		event(core.TypeAgentToolResult, core.ActorSystem, core.ToolResultBody{ToolUseID: "c1", Output: "package a"}),
		event(core.TypeAgentMessage, core.ActorAgent, core.MessageBody{Text: "read it"}),
		event(core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: "and these", Attachments: []core.Attachment{{Name: "a.png", Kind: core.AttachmentImage}, {Name: "b.txt"}}}),
		event(core.TypeAgentMessage, core.ActorAgent, core.MessageBody{Text: "seen"}),
		event(core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: "one more", Attachments: []core.Attachment{{Name: "c.txt"}}}),
		event(core.TypeCompacted, core.ActorSystem, core.CompactedBody{Summary: "files were read"}),
		event(core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: "go on"}),
		event(core.TypeUserMessage, core.ActorHuman, core.MessageBody{Text: "with this", Attachments: []core.Attachment{{Name: "d.txt"}}}),
	}
	cs := NewContexts(4)
	c := &Cycle{SessionID: "sesn_a", Epoch: 1, Agent: &core.Agent{ID: "agt_1", Version: 1, System: "You help."}}
	var log []core.Event
	for i, e := range script {
		e.Seq = uint64(i + 1)
		log = append(log, e)
		for _, how := range []string{"carried on", "derived afresh"} {
			var mc *Context
			var err error
			if how == "carried on" {
				mc, err = cs.Derive(c, log[:len(log):len(log)])
			} else {
				mc, err = Derive(c.Agent.System, log)
			}
			if err != nil {
				t.Fatalf("event %d, %s: %v", i, how, err)
			}
			bytes, first := len(mc.System), 0
			for j, m := range mc.Messages {
				for _, b := range m.Content {
					bytes += len(b.Text) + len(b.Name) + len(b.Input) + len(b.Output) + 16
					if b.Attachment != nil && first == 0 {
						first = j + 1
					}
				}
			}
			if got, want := EstimateTokens(mc), bytes/4+1; got != want {
				t.Fatalf("event %d, %s: estimate %d, a walk counts %d", i, how, got, want)
			}
			if mc.attachedFrom != first {
				t.Fatalf("event %d, %s: first attachment at %d (one more than its index), a walk finds %d", i, how, mc.attachedFrom, first)
			}
		}
	}
}
