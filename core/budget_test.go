package core

import "testing"

func TestFormatBudget(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value float64
		want  string
	}{
		{BudgetCostUSD, 5, "$5.00"},
		{BudgetTokens, 1234567, "1,234,567 tokens"},
		{BudgetTokens, 999, "999 tokens"},
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
