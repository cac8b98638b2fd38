package providertest

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/providers"
)

// testEarlierConversation: what people wrote in the conversation before
// the agent was mentioned reaches the session's first turn, in the log
// once the turn has started: logged before it (a ContextPrimer, when the
// runtime builds the session's tools) or carried by its first input.
func testEarlierConversation(t *testing.T, w *world) {
	const earlier = "The gears slip every Monday at nine."
	w.p.Earlier(t, earlier)
	s := w.mentioned()

	// What the runtime does before a session's first turn: build its
	// tools (which primes a new session), then start the turn.
	pool := mcpbridge.New(mcpbridge.Config{Logger: w.deps.Logger})
	t.Cleanup(pool.Shutdown)
	tools := w.proc.set.Toolset(providers.ToolsetConfig{MCP: pool, Log: w.store, Logger: w.deps.Logger})
	if _, err := tools(t.Context(), s, w.agent); err != nil {
		t.Fatal(err)
	}
	w.turn(s.ID)

	evs, err := w.store.Events(t.Context(), s.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		var b core.MessageBody
		if e.Type == core.TypeUserMessage && e.Decode(&b) == nil && strings.Contains(b.Text, earlier) {
			return
		}
	}
	t.Fatalf("the earlier conversation is not in the first turn's log %q", types)
}
