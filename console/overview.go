package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
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
		row := hourRow{HourStats: hs, Tokens: hs.InputTokens + hs.OutputTokens}
		p.Hours = append(p.Hours, row)
		p.Day.Turns += hs.Turns
		p.Day.Failed += hs.Failed
		p.Day.InputTokens += hs.InputTokens
		p.Day.OutputTokens += hs.OutputTokens
		p.Day.Tokens += row.Tokens
		p.MaxTurns = max(p.MaxTurns, hs.Turns)
	}
	h.render(w, r, http.StatusOK, "overview", layout{Title: "Overview", Nav: "overview", CSRF: s.CSRF, Page: p})
}
