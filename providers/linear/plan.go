package linear

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/linear/linearapi"
)

// planStatus maps an agent.plan entry's status (ACP's pending,
// in_progress, completed) to a step status of Linear's agent plans
// (pending, inProgress, completed, canceled). A status Linear has no word
// for is shown pending unless it says the step was given up.
func planStatus(s string) string {
	switch s {
	case "in_progress", "inProgress":
		return "inProgress"
	case "completed":
		return "completed"
	case "canceled", "cancelled", "failed", "skipped":
		return "canceled"
	}
	return "pending"
}

// planSteps is Linear's plan of an agent.plan: every entry, in order.
func planSteps(entries []core.PlanEntry) []linearapi.PlanStep {
	steps := make([]linearapi.PlanStep, 0, len(entries))
	for _, e := range entries {
		steps = append(steps, linearapi.PlanStep{Content: clip(e.Content, 1000), Status: planStatus(e.Status)})
	}
	return steps
}

// plan sets the agent session's plan to the agent's: Linear keeps no
// partial updates, so each agent.plan replaces it whole. The update is
// idempotent, so a crash that sends it again changes nothing.
func (rc *render) plan(ctx context.Context, entries []core.PlanEntry) error {
	raw, err := json.Marshal(planSteps(entries))
	if err != nil {
		return err
	}
	return rc.updateSession(ctx, sessionUpdate{Plan: raw}, prioAction)
}
