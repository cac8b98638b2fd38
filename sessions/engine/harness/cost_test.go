package harness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// perToken prices a token of any kind at one micro-dollar on the models
// it lists.
type perToken map[string]bool

func (p perToken) Cost(model string, u core.Usage) (float64, bool) {
	if !p[model] {
		return 0, false
	}
	return float64(u.Total()) / 1e6, true
}

// turns records the observer's turn reports.
type turns struct{ reports []harness.TurnReport }

func (o *turns) ModelCall(string, time.Duration, core.Usage, error) {}
func (o *turns) TurnCompleted(r harness.TurnReport)                 { o.reports = append(o.reports, r) }

// TestTurnCost: turn.completed carries the usage of every model call of
// the turn, cached tokens apart, and their estimated cost; a model without
// a price gets tokens only and a null cost. The observer hears the same,
// with the agent and the installation.
func TestTurnCost(t *testing.T) {
	steps := []fakemodel.Step{
		{Calls: []core.Block{{Type: core.BlockToolUse, ToolUseID: "c1", Name: "say", Input: []byte(`{"text":"working"}`)}},
			Usage: core.Usage{InputTokens: 100, OutputTokens: 10, CacheCreationInputTokens: 2000}},
		{Text: "done", Usage: core.Usage{InputTokens: 20, OutputTokens: 5, CacheReadInputTokens: 2000}},
	}
	wantUsage := core.Usage{InputTokens: 120, OutputTokens: 15, CacheReadInputTokens: 2000, CacheCreationInputTokens: 2000}
	for _, tt := range []struct {
		name   string
		prices harness.Pricer
		want   *float64
	}{
		{"priced", perToken{"anthropic/test": true}, ptr(0.004135)},
		{"unknown model", perToken{"anthropic/other": true}, nil},
		{"no price table", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, steps...)
			obs := &turns{}
			e.h.Prices, e.h.Observer = tt.prices, obs
			e.cycle.Installation = "slack:T1"
			e.say("go")
			e.run(t, context.Background())
			var tc core.TurnCompletedBody
			if err := e.log.last(core.TypeTurnCompleted).Decode(&tc); err != nil {
				t.Fatal(err)
			}
			if tc.Usage != wantUsage || !sameCost(tc.CostUSD, tt.want) {
				t.Fatalf("turn.completed usage %+v cost %v, want %+v cost %v", tc.Usage, show(tc.CostUSD), wantUsage, show(tt.want))
			}
			raw := string(e.log.last(core.TypeTurnCompleted).Body)
			if tt.want == nil && !strings.Contains(raw, `"cost_usd":null`) {
				t.Fatalf("an unpriced turn's body %s has no null cost_usd", raw)
			}
			if len(obs.reports) != 1 {
				t.Fatalf("%d turn reports, want 1", len(obs.reports))
			}
			r := obs.reports[0]
			if r.Agent != "a" || r.Installation != "slack:T1" || r.Reason != core.ReasonCompleted || r.Usage != wantUsage || !sameCost(r.CostUSD, tt.want) {
				t.Fatalf("report %+v", r)
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

func sameCost(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}
