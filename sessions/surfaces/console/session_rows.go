package console

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// firstMessageColumn is how many characters of a session's first message
// the sessions table shows; the cell's title holds what the store kept.
const firstMessageColumn = 80

// sessionRow is a session as the sessions table shows it: its agent by
// name, its first message clipped.
type sessionRow struct {
	*core.Session
	// AgentName is "" for an agent deleted since: the row shows its id.
	AgentName    string
	FirstMessage string
}

// agentChoice is an agent the sessions page's filter offers.
type agentChoice struct {
	ID, Name string
	Selected bool
}

// agentNames maps agents' ids to their names.
type agentNames map[string]string

// agentNames reads every agent's name from the store: the lists name
// agents without a request to the API per page.
func (h *Handler) agentNames(ctx context.Context) (agentNames, error) {
	agents, err := allPages(func(p client.ListParams) (*web.Page[*core.Agent], error) {
		list, more, err := h.store.ListAgents(ctx, p.After, p.Limit)
		return &web.Page[*core.Agent]{Data: list, HasMore: more}, err
	}, func(a *core.Agent) string { return a.ID })
	if err != nil {
		return nil, fmt.Errorf("list the agents: %w", err)
	}
	return agentNamesOf(agents), nil
}

func agentNamesOf(agents []*core.Agent) agentNames {
	n := make(agentNames, len(agents))
	for _, a := range agents {
		n[a.ID] = a.Name
	}
	return n
}

// idOf is the id of the agent ref names or is; a ref that is neither
// (an agent deleted since: its sessions remain) is taken as an id.
func (n agentNames) idOf(ref string) string {
	if _, ok := n[ref]; ok || ref == "" {
		return ref
	}
	for id, name := range n {
		if name == ref {
			return id
		}
	}
	return ref
}

func (n agentNames) rows(list []*core.Session) []sessionRow {
	rows := make([]sessionRow, len(list))
	for i, s := range list {
		rows[i] = sessionRow{Session: s, AgentName: n[s.Agent.ID], FirstMessage: core.Clip(s.FirstText, firstMessageColumn)}
	}
	return rows
}

// choices are the agents by name, the one ref names or is selected; a
// ref no agent has stays a choice, so the filter shows what it holds.
func (n agentNames) choices(ref string) []agentChoice {
	out := make([]agentChoice, 0, len(n)+1)
	found := ref == ""
	for id, name := range n {
		sel := ref != "" && (id == ref || name == ref)
		found = found || sel
		out = append(out, agentChoice{ID: id, Name: name, Selected: sel})
	}
	slices.SortFunc(out, func(a, b agentChoice) int { return cmp.Compare(a.Name, b.Name) })
	if !found {
		out = append(out, agentChoice{ID: ref, Name: ref, Selected: true})
	}
	return out
}
