package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// StatsStore is what the stats suite needs: the appends that count turns,
// and the counters.
type StatsStore interface {
	core.Store
	core.StatsStore
}

// RunStats runs the core.StatsStore suite. open must return a fresh, empty
// store whose clock is now for each subtest and close it when the test
// ends.
func RunStats[S StatsStore](t *testing.T, open func(t *testing.T, now func() time.Time) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s StatsStore, clk *statsClock)
	}{
		{"stats/hours", testStatsHours},
		{"stats/bounds", testStatsBounds},
		{"stats/utc", testStatsUTC},
		{"stats/event_time", testStatsEventTime},
		{"stats/refused_appends", testStatsRefused},
		{"stats/other_events", testStatsOtherEvents},
		{"stats/concurrent", testStatsConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &statsClock{t: statsDay.Add(10 * time.Hour)}
			tc.fn(t, open(t, clk.now), clk)
		})
	}
}

// statsDay is the day the suite's turns complete on.
var statsDay = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// statsClock is a store's clock that a test sets.
type statsClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *statsClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *statsClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// at is the suite's day at h:m:s.ms.
func at(h, m, s, ms int) time.Time {
	return statsDay.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second + time.Duration(ms)*time.Millisecond)
}

// completeTurn logs a whole turn: its start and its end with reason r and
// usage u.
func completeTurn(t *testing.T, s core.Store, id string, r core.Reason, u core.Usage) {
	t.Helper()
	appendEvents(t, s, id, core.AppendRequest{TurnID: core.NewID("turn"), Holder: "w1", Events: []core.Event{turnStarted()}})
	appendEvents(t, s, id, core.AppendRequest{Events: []core.Event{turnCompleted(r, u), statusEvent(core.StatusAfter(r), r)}})
}

func hourlyStats(t *testing.T, s StatsStore, from, to time.Time) []core.HourStats {
	t.Helper()
	out, err := s.HourlyStats(t.Context(), from, to)
	must(t, err)
	return out
}

// testStatsHours: each turn.completed counts in its hour; a failed turn
// (reason error) counts as failed too, other reasons do not; hours are
// read oldest first, whatever order they were written in.
func testStatsHours(t *testing.T, s StatsStore, clk *statsClock) {
	a, b := newSession(t, s).ID, newSession(t, s).ID
	clk.set(at(12, 0, 0, 0))
	completeTurn(t, s, a, core.ReasonCompleted, core.Usage{InputTokens: 7, OutputTokens: 2})
	clk.set(at(10, 5, 0, 0))
	completeTurn(t, s, a, core.ReasonNeedsInput, core.Usage{InputTokens: 10, OutputTokens: 3})
	clk.set(at(10, 59, 59, 999))
	completeTurn(t, s, b, core.ReasonError, core.Usage{InputTokens: 5, OutputTokens: 1})
	clk.set(at(12, 30, 0, 0))
	completeTurn(t, s, b, core.ReasonRequiresAction, core.Usage{InputTokens: 1})
	sameJSON(t, "hours", hourlyStats(t, s, at(0, 0, 0, 0), at(24, 0, 0, 0)), []core.HourStats{
		{Hour: at(10, 0, 0, 0), Turns: 2, Failed: 1, InputTokens: 15, OutputTokens: 4},
		{Hour: at(12, 0, 0, 0), Turns: 2, Failed: 0, InputTokens: 8, OutputTokens: 2},
	})
	// Cached tokens and the cost of priced turns add up too; an unpriced
	// turn adds no cost. 0.1 + 0.2 reads 0.3 (rounded to the nano-dollar).
	for _, turn := range []struct {
		u    core.Usage
		cost *float64
	}{
		{core.Usage{InputTokens: 2, CacheReadInputTokens: 300, CacheCreationInputTokens: 20}, usd(0.1)},
		{core.Usage{OutputTokens: 1, CacheReadInputTokens: 5}, nil},
		{core.Usage{InputTokens: 1}, usd(0.2)},
	} {
		clk.set(at(14, 10, 0, 0))
		id := core.NewID("turn")
		appendEvents(t, s, a, core.AppendRequest{TurnID: id, Holder: "w1", Events: []core.Event{turnStarted()}})
		done := core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem,
			core.TurnCompletedBody{YieldReason: core.ReasonCompleted, Usage: turn.u, CostUSD: turn.cost})
		appendEvents(t, s, a, core.AppendRequest{TurnID: id, Events: []core.Event{done, statusEvent(core.StatusIdle, core.ReasonCompleted)}})
	}
	sameJSON(t, "priced hour", hourlyStats(t, s, at(14, 0, 0, 0), at(15, 0, 0, 0)), []core.HourStats{
		{Hour: at(14, 0, 0, 0), Turns: 3, InputTokens: 3, OutputTokens: 1, CacheReadInputTokens: 305, CacheCreationInputTokens: 20, CostUSD: 0.3},
	})
}

// testStatsBounds: HourlyStats returns the hours whose start is in
// [from, to).
func testStatsBounds(t *testing.T, s StatsStore, clk *statsClock) {
	id := newSession(t, s).ID
	for _, h := range []int{9, 10, 11} {
		clk.set(at(h, 30, 0, 0))
		completeTurn(t, s, id, core.ReasonCompleted, core.Usage{InputTokens: int64(h)})
	}
	hours := func(from, to time.Time) []int {
		var out []int
		for _, h := range hourlyStats(t, s, from, to) {
			out = append(out, h.Hour.Hour())
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     []int
	}{
		{"all", at(0, 0, 0, 0), at(24, 0, 0, 0), []int{9, 10, 11}},
		{"to excluded", at(9, 0, 0, 0), at(11, 0, 0, 0), []int{9, 10}},
		{"from included", at(10, 0, 0, 0), at(11, 0, 0, 1), []int{10, 11}},
		{"an hour starting before from", at(9, 0, 0, 1), at(12, 0, 0, 0), []int{10, 11}},
		{"empty range", at(10, 0, 0, 0), at(10, 0, 0, 0), nil},
		{"reversed range", at(12, 0, 0, 0), at(9, 0, 0, 0), nil},
		{"no hour counted", at(12, 0, 0, 0), at(18, 0, 0, 0), nil},
		{"bounds in another zone", at(10, 0, 0, 0).In(time.FixedZone("UTC-3", -3*3600)), at(11, 0, 0, 0).In(time.FixedZone("UTC+2", 2*3600)), []int{10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameJSON(t, "hours", hours(tc.from, tc.to), tc.want)
		})
	}
	// No hour is an empty list, not null, as the API shows it.
	sameJSON(t, "no hours", hourlyStats(t, s, at(12, 0, 0, 0), at(18, 0, 0, 0)), []core.HourStats{})
}

// testStatsUTC: hours are UTC hours, whatever the zone of the store's
// clock, half-hour zones included.
func testStatsUTC(t *testing.T, s StatsStore, clk *statsClock) {
	id := newSession(t, s).ID
	clk.set(at(10, 45, 0, 0).In(time.FixedZone("UTC+5:30", 5*3600+1800)))
	completeTurn(t, s, id, core.ReasonCompleted, core.Usage{InputTokens: 1, OutputTokens: 1})
	got := hourlyStats(t, s, at(0, 0, 0, 0), at(24, 0, 0, 0))
	sameJSON(t, "hours", got, []core.HourStats{{Hour: at(10, 0, 0, 0), Turns: 1, InputTokens: 1, OutputTokens: 1}})
	if got[0].Hour.Location() != time.UTC {
		t.Fatalf("hour %v is not in UTC", got[0].Hour)
	}
}

// testStatsEventTime: a turn counts in the hour of its turn.completed's
// time, which the appender may set; several in one append are each
// counted.
func testStatsEventTime(t *testing.T, s StatsStore, clk *statsClock) {
	id := newSession(t, s).ID
	clk.set(at(10, 5, 0, 0))
	early := turnCompleted(core.ReasonError, core.Usage{InputTokens: 4, OutputTokens: 4})
	early.CreatedAt = core.NewTime(at(8, 30, 0, 0))
	appendEvents(t, s, id, core.AppendRequest{Events: []core.Event{
		early,
		turnCompleted(core.ReasonCompleted, core.Usage{InputTokens: 1, OutputTokens: 2}),
		turnCompleted(core.ReasonError, core.Usage{InputTokens: 3, OutputTokens: 5}),
	}})
	sameJSON(t, "hours", hourlyStats(t, s, at(0, 0, 0, 0), at(24, 0, 0, 0)), []core.HourStats{
		{Hour: at(8, 0, 0, 0), Turns: 1, Failed: 1, InputTokens: 4, OutputTokens: 4},
		{Hour: at(10, 0, 0, 0), Turns: 2, Failed: 1, InputTokens: 4, OutputTokens: 7},
	})
}

// testStatsRefused: an append the store refuses counts nothing: fenced
// by an old lease epoch, to an archived or unknown session, or with a
// malformed event beside the turn.completed.
func testStatsRefused(t *testing.T, s StatsStore, _ *statsClock) {
	ctx := t.Context()
	done := func() core.Event { return turnCompleted(core.ReasonError, core.Usage{InputTokens: 9, OutputTokens: 9}) }

	id := newSession(t, s).ID
	a, _ := takeLease(t, s, id, "a", time.Hour)
	must(t, s.ReleaseLease(ctx, a))
	b, ok := takeLease(t, s, id, "b", time.Hour)
	if !ok {
		t.Fatal("b could not take a released session")
	}
	_, err := s.Append(ctx, id, core.AppendRequest{Epoch: a.Epoch, Events: []core.Event{done()}})
	wantErr(t, err, core.ErrLeaseLost)

	_, err = s.Append(ctx, id, core.AppendRequest{Epoch: b.Epoch, Events: []core.Event{done(), {Type: core.TypeAgentMessage, Body: []byte(`{bad`)}}})
	wantErr(t, err, core.ErrInvalid)
	_, err = s.Append(ctx, id, core.AppendRequest{Events: []core.Event{done(), {Type: core.TypeTurnCompleted, Body: []byte(`{"usage":"lots"}`)}}})
	wantErr(t, err, core.ErrInvalid)

	_, err = s.Append(ctx, "ses_missing", core.AppendRequest{Events: []core.Event{done()}})
	wantErr(t, err, core.ErrNotFound)
	gone := newSession(t, s).ID
	_, err = s.Archive(ctx, gone)
	must(t, err)
	_, err = s.Append(ctx, gone, core.AppendRequest{Events: []core.Event{done()}})
	wantErr(t, err, core.ErrArchived)

	sameJSON(t, "hours after refused appends", hourlyStats(t, s, time.Time{}, at(48, 0, 0, 0)), []core.HourStats{})
	// The lease's own holder is counted.
	appendEvents(t, s, id, core.AppendRequest{Epoch: b.Epoch, Events: []core.Event{done()}})
	sameJSON(t, "hours", hourlyStats(t, s, time.Time{}, at(48, 0, 0, 0)), []core.HourStats{
		{Hour: at(10, 0, 0, 0), Turns: 1, Failed: 1, InputTokens: 9, OutputTokens: 9},
	})
}

// testStatsOtherEvents: only turn.completed counts, not the turn's other
// events nor the inputs an append takes.
func testStatsOtherEvents(t *testing.T, s StatsStore, _ *statsClock) {
	id := newSession(t, s, message("go")).ID
	appendEvents(t, s, id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "w1", Events: []core.Event{
		statusEvent(core.StatusRunning, ""), turnStarted(),
	}})
	appendEvents(t, s, id, core.AppendRequest{Events: []core.Event{
		agentMessage("working"),
		core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "boom"}),
		statusEvent(core.StatusFailed, core.ReasonError),
	}})
	sameJSON(t, "hours", hourlyStats(t, s, time.Time{}, at(48, 0, 0, 0)), []core.HourStats{})
}

// testStatsConcurrent: turns completing at once on many sessions are
// all counted.
func testStatsConcurrent(t *testing.T, s StatsStore, _ *statsClock) {
	const n = 8
	ids := make([]string, n)
	for i := range ids {
		ids[i] = newSession(t, s).ID
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			_, errs[i] = s.Append(t.Context(), id, core.AppendRequest{Events: []core.Event{
				turnCompleted(core.ReasonCompleted, core.Usage{InputTokens: int64(i + 1), OutputTokens: 1}),
			}})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	sameJSON(t, "hours", hourlyStats(t, s, time.Time{}, at(48, 0, 0, 0)), []core.HourStats{
		{Hour: at(10, 0, 0, 0), Turns: n, InputTokens: n * (n + 1) / 2, OutputTokens: n},
	})
}

func usd(v float64) *float64 { return &v }
