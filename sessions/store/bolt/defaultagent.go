package bolt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultSystem is the system prompt of the agent named default when the
// gateway creates it.
const DefaultSystem = "You are a helpful agent working with a team in their chat, issue tracker and code host. Be concise. Use the say tool for progress updates on long work, and the ask tool when you cannot continue without an answer."

// EnsureDefaultAgent creates the agent named default with model and
// system, or adds a version when its model is no longer model; nothing
// when model is empty. Only the model is kept in step: the other fields
// are the operator's to change over the API. Replicas starting together
// on one store race to do it: the one that loses (ErrConflict) looks
// again.
func EnsureDefaultAgent(ctx context.Context, store core.AgentStore, model, system string, log *slog.Logger) error {
	if model == "" {
		return nil
	}
	for attempt := 1; ; attempt++ {
		err := ensureDefaultAgent(ctx, store, model, system, log)
		if !errors.Is(err, core.ErrConflict) || attempt == 3 {
			return err
		}
	}
}

func ensureDefaultAgent(ctx context.Context, store core.AgentStore, model, system string, log *slog.Logger) error {
	a, err := store.GetAgent(ctx, "default")
	switch {
	case errors.Is(err, core.ErrNotFound):
		a, err = store.CreateAgent(ctx, &core.Agent{Name: "default", Model: model, System: system})
		if err != nil {
			return fmt.Errorf("create the default agent: %w", err)
		}
		log.Info("created the default agent", "agent_id", a.ID, "model", model)
	case err != nil:
		return fmt.Errorf("read the default agent: %w", err)
	case a.Model != model:
		a, err = store.UpdateAgent(ctx, a.ID, a.Version, func(a *core.Agent) error { a.Model = model; return nil })
		if err != nil {
			return fmt.Errorf("update the default agent: %w", err)
		}
		log.Info("default agent model changed", "agent_id", a.ID, "version", a.Version, "model", model)
	}
	return nil
}
