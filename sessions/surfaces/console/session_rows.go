package console

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// firstMessageColumn is how many characters of a session's first message
// the sessions table shows; the cell's title holds what the store kept.
const firstMessageColumn = 80

// sessionRow is a session as the sessions table shows it: its agent by
// name, its first message clipped, its times formatted. It is flat, with
// every value the row shows worked out before the page renders: the
// template reads fields of one struct, which costs a fraction of reading
// them through an embedded session or calling functions for the times.
type sessionRow struct {
	ID, Status, Tenant string
	// FirstMessage is the first message clipped to the column;
	// FirstTitle is the whole of it when it was clipped, else "".
	FirstMessage, FirstTitle string
	AgentID                  string
	AgentVersion             int
	// AgentName is "" for an agent deleted since: the row shows its id.
	AgentName        string
	Origin           *core.Origin
	Created, Updated rowTime
}

// rowTime is a time as a row shows it: Attr for <time datetime>, which
// the script shows in the browser's zone, Text until it does.
type rowTime struct{ Attr, Text string }

func rowTimeOf(t time.Time) rowTime { return rowTime{Attr: utcAttr(t), Text: utcText(t)} }

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
		r := sessionRow{
			ID: s.ID, Status: string(s.Status), Tenant: s.Tenant,
			FirstMessage: core.Clip(s.FirstText, firstMessageColumn),
			AgentID:      s.Agent.ID, AgentVersion: s.Agent.Version, AgentName: n[s.Agent.ID],
			Origin:  s.Origin,
			Created: rowTimeOf(s.CreatedAt.Time), Updated: rowTimeOf(s.UpdatedAt.Time),
		}
		if r.FirstMessage != s.FirstText {
			r.FirstTitle = s.FirstText
		}
		rows[i] = r
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
