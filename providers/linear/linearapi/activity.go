package linearapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/Khan/genqlient/graphql"
)

// Activity content types of Linear's Agent API.
const (
	Thought     = "thought"
	Action      = "action"
	Response    = "response"
	Elicitation = "elicitation"
	ErrorType   = "error"
)

// Content is an agent activity's payload. thought, response, elicitation
// and error carry Body (Markdown); action carries Action (what is done,
// "Searching"), Parameter (on what) and, once done, Result (Markdown).
type Content struct {
	Type      string  `json:"type"`
	Body      string  `json:"body,omitempty"`
	Action    string  `json:"action,omitempty"`
	Parameter string  `json:"parameter,omitempty"`
	Result    *string `json:"result,omitempty"`
}

// CreateActivity posts an activity to an agent session; an ephemeral one
// is replaced by the session's next activity (for an action in progress).
// It returns the activity's id.
func CreateActivity(ctx context.Context, c graphql.Client, agentSessionID string, content Content, ephemeral bool) (string, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return "", fmt.Errorf("encode activity: %w", err)
	}
	var eph *bool
	if ephemeral {
		eph = &ephemeral
	}
	resp, err := CreateAgentActivity(ctx, c, agentSessionID, raw, eph, nil, nil, nil)
	if err != nil {
		return "", err
	}
	if !resp.AgentActivityCreate.Success {
		return "", fmt.Errorf("linear CreateAgentActivity: success false")
	}
	return resp.AgentActivityCreate.AgentActivity.Id, nil
}

// PlanStep is one step of an agent session's plan.
type PlanStep struct {
	Content string `json:"content"`
	// Status is pending, inProgress, completed or canceled.
	Status string `json:"status"`
}

// SetExternalURL points an agent session at the page that shows it, as
// its externalLink and as its one external URL (labelled label).
func SetExternalURL(ctx context.Context, c graphql.Client, agentSessionID, url, label string) error {
	resp, err := UpdateAgentSession(ctx, c, agentSessionID, &url, []AgentSessionExternalUrlInput{{Label: label, Url: url}}, nil)
	if err != nil {
		return err
	}
	if !resp.AgentSessionUpdate.Success {
		return fmt.Errorf("linear UpdateAgentSession: success false")
	}
	return nil
}

// SetPlan replaces an agent session's plan (Linear keeps no partial
// updates: the whole list each time; empty clears it).
func SetPlan(ctx context.Context, c graphql.Client, agentSessionID string, steps []PlanStep) error {
	if steps == nil {
		steps = []PlanStep{}
	}
	raw, err := json.Marshal(steps)
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	plan := json.RawMessage(raw)
	resp, err := UpdateAgentSession(ctx, c, agentSessionID, nil, nil, &plan)
	if err != nil {
		return err
	}
	if !resp.AgentSessionUpdate.Success {
		return fmt.Errorf("linear UpdateAgentSession: success false")
	}
	return nil
}
