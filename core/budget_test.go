package core

import (
	"strings"
	"testing"
)

func TestFormatBudget(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value float64
		want  string
	}{
		{BudgetCostUSD, 5, "$5.00"},
		{BudgetTokens, 1234567, "1,234,567 tokens"},
		{BudgetTokens, 999, "999 tokens"},
		{BudgetTurns, 1, "1 turn"},
		{BudgetTurns, 2, "2 turns"},
	} {
		if got := FormatBudget(tt.name, tt.value); got != tt.want {
			t.Errorf("FormatBudget(%s, %v) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestOverBudget(t *testing.T) {
	cost := 1.25
	for _, tt := range []struct {
		name   string
		limits Limits
		tokens int64
		cost   *float64
		want   string
	}{
		{"no budgets", Limits{}, 1 << 40, &cost, ""},
		{"tokens under", Limits{MaxSessionTokens: 1000}, 999, nil, ""},
		{"tokens reached", Limits{MaxSessionTokens: 1000}, 1000, nil, BudgetTokens},
		{"cost reached", Limits{MaxSessionCostUSD: 1.25}, 10, &cost, BudgetCostUSD},
		{"cost unpriced", Limits{MaxSessionCostUSD: 0.01}, 10, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := OverBudget(tt.limits, tt.tokens, tt.cost)
			if name := func() string {
				if got == nil {
					return ""
				}
				return got.Name
			}(); name != tt.want {
				t.Fatalf("OverBudget = %+v, want %q", got, tt.want)
			}
		})
	}
}

// TestOverTurns: the turn after the cap's last pauses, a cap of 0 is none.
func TestOverTurns(t *testing.T) {
	for _, tt := range []struct {
		name  string
		max   int
		turns int
		want  bool
	}{
		{"no cap", 0, 100, false},
		{"under", 2, 1, false},
		{"at the cap", 2, 2, true},
		{"lowered below", 2, 5, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := OverTurns(Limits{MaxTurns: tt.max}, tt.turns)
			if (got != nil) != tt.want {
				t.Fatalf("OverTurns(%d, %d) = %+v, want over %v", tt.max, tt.turns, got, tt.want)
			}
			if got != nil && (got.Name != BudgetTurns || got.Limit != float64(tt.max) || got.Spent != float64(tt.turns) || got.Reason() != ReasonMaxTurns) {
				t.Fatalf("OverTurns = %+v (reason %s)", got, got.Reason())
			}
		})
	}
	if err := (Limits{MaxTurns: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "max_turns") {
		t.Fatalf("Validate(max_turns -1) = %v", err)
	}
	if got := (Limits{}).Or(Limits{MaxTurns: 3}); got.MaxTurns != 3 {
		t.Fatalf("Or kept max_turns %d, want 3", got.MaxTurns)
	}
}

func TestRaiseCommand(t *testing.T) {
	for _, tt := range []struct {
		over BudgetPause
		want string
	}{
		{BudgetPause{Name: BudgetTokens, Limit: 500}, "budget 1000 tokens"},
		{BudgetPause{Name: BudgetCostUSD, Limit: 2.5}, "budget $5.00"},
		{BudgetPause{Name: BudgetTurns, Limit: 2}, "budget 4 turns"},
	} {
		if got := RaiseCommand(&tt.over, 2); got != tt.want {
			t.Errorf("RaiseCommand(%+v, 2) = %q, want %q", tt.over, got, tt.want)
		}
	}
}
