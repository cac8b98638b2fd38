package console

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// maxPinPages bounds the pages of an agent's sessions read to count them
// by version: the store has no count by version, and an agent with
// sessions beyond the bound gets counts of the first ones, saying so.
const maxPinPages = 10

// versionPins are an agent's versions, newest first, with the sessions
// that run each.
type versionPins struct {
	Versions []versionPin
	// Counted is how many sessions were counted; More says the agent has
	// sessions past them, not counted.
	Counted int
	More    bool
}

// versionPin is one version and the sessions pinned to it.
type versionPin struct {
	Version int
	// Prev is the version before it, the one its changes are against.
	Prev int
	// Sessions counts the version's sessions; Active those not archived.
	Sessions, Active int
}

// versionPins counts a's sessions by the version they run.
func (h *Handler) versionPins(ctx context.Context, a *core.Agent) (*versionPins, error) {
	total, active := map[int]int{}, map[int]int{}
	p := &versionPins{}
	after := ""
	for range maxPinPages {
		list, err := h.store.ListSessions(ctx, core.SessionFilter{AgentID: a.ID, After: after, Limit: pageSize})
		if err != nil {
			return nil, fmt.Errorf("list the sessions of agent %s: %w", a.ID, err)
		}
		for _, s := range list.Sessions {
			total[s.Agent.Version]++
			if s.Status != core.StatusArchived {
				active[s.Agent.Version]++
			}
		}
		p.Counted += len(list.Sessions)
		p.More = list.HasMore && list.Next != ""
		if !p.More {
			break
		}
		after = list.Next
	}
	for v := a.Version; v >= 1; v-- {
		p.Versions = append(p.Versions, versionPin{Version: v, Prev: v - 1, Sessions: total[v], Active: active[v]})
	}
	return p, nil
}
