package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.StatsStore = (*Store)(nil)

// turnStats are the counters of the turns one append logs, by hour: one
// append may complete turns of several hours, and one statement may not
// update a row twice.
type turnStats map[time.Time]*core.HourStats

// count adds a logged turn.completed to its hour.
func (ts *turnStats) count(e core.Event, done *core.TurnCompletedBody) {
	if *ts == nil {
		*ts = turnStats{}
	}
	hour := record.StatsHour(e.CreatedAt.Time)
	h := (*ts)[hour]
	if h == nil {
		h = &core.HourStats{Hour: hour}
		(*ts)[hour] = h
	}
	record.CountTurn(h, done)
}

// queue queues the one upsert of the hours' rows, in hour order so two
// appends lock the rows they share in the same order.
func (ts turnStats) queue(b *pgx.Batch) {
	if len(ts) == 0 {
		return
	}
	hours := slices.SortedFunc(maps.Keys(ts), time.Time.Compare)
	var turns, failed, input, output, cacheRead, cacheCreation []int64
	var cost []float64
	for _, hour := range hours {
		h := ts[hour]
		turns, failed = append(turns, h.Turns), append(failed, h.Failed)
		input, output = append(input, h.InputTokens), append(output, h.OutputTokens)
		cacheRead, cacheCreation = append(cacheRead, h.CacheReadInputTokens), append(cacheCreation, h.CacheCreationInputTokens)
		cost = append(cost, h.CostUSD)
	}
	b.Queue(`INSERT INTO hourly_stats (hour, turns, failed, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd)
		SELECT * FROM unnest($1::timestamptz[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::float8[]) ORDER BY 1
		ON CONFLICT (hour) DO UPDATE SET turns = hourly_stats.turns + excluded.turns, failed = hourly_stats.failed + excluded.failed,
			input_tokens = hourly_stats.input_tokens + excluded.input_tokens, output_tokens = hourly_stats.output_tokens + excluded.output_tokens,
			cache_read_tokens = hourly_stats.cache_read_tokens + excluded.cache_read_tokens,
			cache_creation_tokens = hourly_stats.cache_creation_tokens + excluded.cache_creation_tokens,
			cost_usd = round((hourly_stats.cost_usd + excluded.cost_usd)::numeric, 9)::float8`,
		hours, turns, failed, input, output, cacheRead, cacheCreation, cost)
}

// HourlyStats returns the hours in [from, to) that have counters, oldest
// first.
func (s *Store) HourlyStats(ctx context.Context, from, to time.Time) ([]core.HourStats, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT hour, turns, failed, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd FROM hourly_stats
		WHERE hour >= $1 AND hour < $2 ORDER BY hour`, from, to)
	if err != nil {
		return nil, fmt.Errorf("hourly stats: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.HourStats, error) {
		var h core.HourStats
		err := r.Scan(&h.Hour, &h.Turns, &h.Failed, &h.InputTokens, &h.OutputTokens, &h.CacheReadInputTokens, &h.CacheCreationInputTokens, &h.CostUSD)
		h.Hour = h.Hour.UTC()
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("hourly stats: %w", err)
	}
	if out == nil {
		out = []core.HourStats{}
	}
	return out, nil
}
