package core

import (
	"context"
	"time"
)

// HourStats are the counters of one hour (UTC) of turns: the store adds to
// them in the transaction that logs each turn.completed, so an overview
// reads a day as 24 rows, never the logs.
type HourStats struct {
	// Hour is the hour's start, UTC, by the turn.completed event's time.
	Hour time.Time `json:"hour"`
	// Turns counts completed turns; Failed those whose reason is
	// ReasonError.
	Turns  int64 `json:"turns"`
	Failed int64 `json:"failed"`
	// Tokens are the turns' usage summed.
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	// CostUSD sums the estimated cost of the hour's priced turns.
	CostUSD float64 `json:"cost_usd"`
}

// StatsStore reads the hourly counters.
type StatsStore interface {
	// HourlyStats returns the hours in [from, to) that have counters,
	// oldest first.
	HourlyStats(ctx context.Context, from, to time.Time) ([]HourStats, error)
}
