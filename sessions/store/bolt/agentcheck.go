package bolt

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
)

// WarnStoredAgents logs one warning for each stored agent whose name an
// agent created today could not have (names had no rule before): it still
// loads and updates, but a rename must follow the rule.
func WarnStoredAgents(ctx context.Context, store core.AgentStore, log *slog.Logger) error {
	after := ""
	for {
		page, more, err := store.ListAgents(ctx, after, 1000)
		if err != nil {
			return fmt.Errorf("check stored agents: %w", err)
		}
		for _, a := range page {
			if err := core.ValidAgentName(a.Name); err != nil {
				log.Warn("agent name does not follow the naming rule; rename it", "agent_id", a.ID, "err", err)
			}
			after = a.ID
		}
		if !more || len(page) == 0 {
			return nil
		}
	}
}
