package record

import (
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// StatsHour is the hour whose counters a turn.completed logged at t adds
// to: the hour's start, UTC.
func StatsHour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// CountTurn adds one completed turn to its hour's counters.
func CountTurn(h *core.HourStats, done *core.TurnCompletedBody) {
	h.Turns++
	if done.YieldReason == core.ReasonError {
		h.Failed++
	}
	h.InputTokens += done.Usage.InputTokens
	h.OutputTokens += done.Usage.OutputTokens
	h.CacheReadInputTokens += done.Usage.CacheReadInputTokens
	h.CacheCreationInputTokens += done.Usage.CacheCreationInputTokens
	if done.CostUSD != nil {
		h.CostUSD = core.RoundUSD(h.CostUSD + *done.CostUSD)
	}
}
