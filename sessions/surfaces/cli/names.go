package cli

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// A person reads agents by name: tables and records name each agent,
// with its id where a record shows one agent.

// agentNames maps agent ids to names, from one listing of the agents,
// so that a table names each row's agent without a request per row.
type agentNames map[string]string

// listAgentNames lists the agents when a table names any (need).
func listAgentNames(ctx context.Context, cl *client.Client, need bool) (agentNames, error) {
	if !need {
		return agentNames{}, nil
	}
	all, err := listAll(ctx, cl.ListAgents, func(a core.Agent) string { return a.ID })
	if err != nil {
		return nil, fmt.Errorf("list the agents to name them: %w", err)
	}
	names := agentNames{}
	for _, a := range all {
		names[a.ID] = a.Name
	}
	return names, nil
}

// agentName is one agent's name for a record shown as text; "" when it
// cannot be read (an agent deleted since), where its id stands alone,
// and with --json, which shows the record as the API answers it.
func (c *subcommand) agentName(ctx context.Context, cl *client.Client, id string) string {
	if id == "" || c.json {
		return ""
	}
	a, err := cl.GetAgent(ctx, id)
	if err != nil {
		return ""
	}
	return a.Name
}

// of is the agent's name, else its id (an agent deleted since).
func (n agentNames) of(id string) string { return firstOf(n[id], id) }

// showAgentRef is an agent version, named when name is known.
func showAgentRef(r core.AgentRef, name string) string {
	if name == "" {
		return fmt.Sprintf("%s (version %d)", r.ID, r.Version)
	}
	return fmt.Sprintf("%s (%s, version %d)", name, r.ID, r.Version)
}

// resolveAgent turns an agent's id or name, as a person typed it, into
// its id; an unknown one is an error naming the closest there is.
func resolveAgent(ctx context.Context, cl *client.Client, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	a, err := getAgent(ctx, cl, ref)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}
