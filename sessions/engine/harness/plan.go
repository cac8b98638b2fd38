package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// maxPlanEntries bounds a plan: a checklist people read, not a log.
const maxPlanEntries = 50

// Plan records the agent's plan for the turn as an agent.plan event, the
// whole plan each time, as ACP agents send theirs: each platform shows it
// natively (a Linear plan, a Slack plan, a GitHub checklist).
type Plan struct{}

func (Plan) Def() core.ToolDef {
	return core.ToolDef{
		Name: core.PlanTool,
		Description: "Show the people following this conversation your plan for a task of several steps, as a checklist, and keep it current: " +
			"call it again with the whole plan whenever a step starts or ends. Skip it for a quick answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"entries":{"type":"array","description":"The plan's steps, in order.","items":{"type":"object",` +
			`"properties":{"content":{"type":"string","description":"What the step does, in a few words."},` +
			`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
			`"priority":{"type":"string","enum":["high","medium","low"]}},"required":["content","status"]}}},"required":["entries"]}`),
	}
}

func (Plan) Call(_ context.Context, call core.ToolCall) (core.ToolResult, error) {
	p, err := parsePlan(call.Input)
	if err != nil {
		return core.ToolResult{Output: err.Error(), IsError: true}, nil
	}
	done := 0
	for _, e := range p.Entries {
		if e.Status == "completed" {
			done++
		}
	}
	return core.ToolResult{Output: fmt.Sprintf("plan shown: %d steps, %d completed", len(p.Entries), done), Plan: p}, nil
}

// parsePlan reads and checks the plan tool's input.
func parsePlan(input json.RawMessage) (*core.PlanBody, error) {
	var in core.PlanBody
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("input must be {\"entries\": [{\"content\", \"status\", \"priority\"}]}: %w", err)
	}
	if len(in.Entries) == 0 || len(in.Entries) > maxPlanEntries {
		return nil, fmt.Errorf("entries: want 1 to %d steps, got %d", maxPlanEntries, len(in.Entries))
	}
	for i := range in.Entries {
		e := &in.Entries[i]
		e.Content = strings.TrimSpace(e.Content)
		if e.Content == "" || len(e.Content) > 500 {
			return nil, fmt.Errorf("entries[%d].content: want 1 to 500 bytes of text", i)
		}
		switch e.Status {
		case "pending", "in_progress", "completed":
		default:
			return nil, fmt.Errorf("entries[%d].status %q: want pending, in_progress or completed", i, e.Status)
		}
		switch e.Priority {
		case "":
			e.Priority = "medium"
		case "high", "medium", "low":
		default:
			return nil, fmt.Errorf("entries[%d].priority %q: want high, medium or low", i, e.Priority)
		}
	}
	return &in, nil
}
