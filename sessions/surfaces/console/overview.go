package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// statuses in the order a session usually goes through them.
var statuses = []core.Status{
	core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput,
	core.StatusIdle, core.StatusFailed, core.StatusArchived,
}

type statusCount struct {
	Status core.Status
	Count  int
}

// hourRow is one hour of the day's table.
type hourRow struct {
	core.HourStats
	Tokens int64
}

type overviewPage struct {
	Statuses []statusCount
	Sessions int
	// From and To bound the day shown: the 24 hours up to the end of the
	// current one.
	From, To time.Time
	Hours    []hourRow // newest first
	Day      hourRow   // the hours summed
	MaxTurns int64

	// Each section below reads on its own: one that fails says so and
	// the rest of the page still shows.
	Installations overviewInstallations
	Dead          deadDeliveries
	Sandboxes     sandboxes
}

type overviewInstallations struct {
	Rows []installRow
	// Unhealthy counts those that need attention.
	Unhealthy int
	Error     string
}

// deadShown is how many dead-lettered deliveries the overview lists.
const deadShown = 5

type deadDeliveries struct {
	Count int
	// Capped says there are more than Count: the count stopped there.
	Capped bool
	Latest []deadRow // newest first
	Error  string
}

// deadRow is a dead-lettered delivery and its last attempt (nil when it
// had none).
type deadRow struct {
	core.Delivery
	Last *core.Attempt
}

// Container is one session's sandbox container.
type Container struct {
	SessionID, Name, ID string
	// State is the engine's (running, exited: hibernated, …); Status its
	// summary ("Up 5 minutes").
	State, Status string
	Created       time.Time
}

// Containers lists this replica's sandbox containers, newest first.
type Containers interface {
	Containers(ctx context.Context) ([]Container, error)
}

type sandboxes struct {
	Off bool
	// Why is the cause of Off and its fix, when the gateway knows them.
	Why     *SandboxOff
	List    []Container
	Running int
	Error   string
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	ctx := r.Context()
	counts, err := h.store.CountByStatus(ctx)
	if err != nil {
		h.failed(w, r, s, "count the sessions", err)
		return
	}
	to := h.cfg.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	from := to.Add(-24 * time.Hour)
	hours, err := h.store.HourlyStats(ctx, from, to)
	if err != nil {
		h.failed(w, r, s, "read the hourly counters", err)
		return
	}
	p := overviewPage{From: from, To: to}
	for _, st := range statuses {
		p.Statuses = append(p.Statuses, statusCount{st, counts[st]})
		p.Sessions += counts[st]
	}
	for _, hs := range slices.Backward(hours) {
		row := hourRow{HourStats: hs, Tokens: hs.InputTokens + hs.OutputTokens + hs.CacheReadInputTokens + hs.CacheCreationInputTokens}
		p.Hours = append(p.Hours, row)
		p.Day.Turns += hs.Turns
		p.Day.Failed += hs.Failed
		p.Day.InputTokens += hs.InputTokens
		p.Day.OutputTokens += hs.OutputTokens
		p.Day.CacheReadInputTokens += hs.CacheReadInputTokens
		p.Day.CacheCreationInputTokens += hs.CacheCreationInputTokens
		p.Day.CostUSD = core.RoundUSD(p.Day.CostUSD + hs.CostUSD)
		p.Day.Tokens += row.Tokens
		p.MaxTurns = max(p.MaxTurns, hs.Turns)
	}
	p.Installations = h.overviewInstallations(ctx)
	p.Dead = h.deadDeliveries(ctx)
	p.Sandboxes = h.sandboxes(ctx)
	h.render(w, r, http.StatusOK, "overview", layout{Title: "Overview", Nav: "overview", CSRF: s.CSRF, Page: p})
}

// unreadable is what a section shows when its read failed; the log has
// the error.
const unreadable = "The gateway could not read this; its log says why. Reload to try again."

func (h *Handler) overviewInstallations(ctx context.Context) overviewInstallations {
	var out overviewInstallations
	list, err := h.allInstallations(ctx)
	if err == nil {
		var agents []core.Agent
		if agents, err = h.allAgents(ctx); err == nil {
			out.Rows = h.rowsOf(list, agents)
		}
	}
	if err != nil {
		h.log.Error("console: overview: installations", "err", err)
		out.Error = unreadable
	}
	for _, row := range out.Rows {
		if !row.Health.OK {
			out.Unhealthy++
		}
	}
	return out
}

// deadDeliveries counts the dead-lettered webhook deliveries and keeps
// the latest: the list is in id order, oldest first.
func (h *Handler) deadDeliveries(ctx context.Context) deadDeliveries {
	var out deadDeliveries
	p := client.DeliveryListParams{State: core.DeliveryDead, ListParams: client.ListParams{Limit: 1000}}
	for i := range maxListPages {
		page, err := h.api.ListDeliveries(ctx, p)
		if err != nil {
			h.log.Error("console: overview: dead deliveries", "err", err)
			return deadDeliveries{Error: unreadable}
		}
		out.Count += len(page.Data)
		for _, d := range page.Data[max(0, len(page.Data)-deadShown):] {
			row := deadRow{Delivery: d}
			if n := len(d.Attempts); n > 0 {
				row.Last = &d.Attempts[n-1]
			}
			out.Latest = append(out.Latest, row)
		}
		out.Latest = out.Latest[max(0, len(out.Latest)-deadShown):]
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
		out.Capped = i == maxListPages-1
		p.After = page.Data[len(page.Data)-1].ID
	}
	slices.Reverse(out.Latest)
	return out
}

func (h *Handler) sandboxes(ctx context.Context) sandboxes {
	if h.cfg.Containers == nil {
		return sandboxes{Off: true, Why: h.cfg.SandboxOff}
	}
	list, err := h.cfg.Containers.Containers(ctx)
	if err != nil {
		h.log.Error("console: overview: sandbox containers", "err", err)
		return sandboxes{Error: "The Docker engine did not list the sandboxes (" + strings.Join(strings.Fields(err.Error()), " ") + "). Check that the engine runs, then reload."}
	}
	out := sandboxes{List: list}
	for _, c := range list {
		if c.State == "running" {
			out.Running++
		}
	}
	return out
}
