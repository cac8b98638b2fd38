package core

import "testing"

func TestParseBudgetCommand(t *testing.T) {
	for _, tt := range []struct {
		text string
		want Limits
		ok   bool
	}{
		{"budget $5", Limits{MaxSessionCostUSD: 5}, true},
		{"  Budget $ 2.50. ", Limits{MaxSessionCostUSD: 2.5}, true},
		{"budget 3 usd", Limits{MaxSessionCostUSD: 3}, true},
		{"budget 200k tokens", Limits{MaxSessionTokens: 200_000}, true},
		{"budget 1.5M tokens", Limits{MaxSessionTokens: 1_500_000}, true},
		{"budget 5000 token", Limits{MaxSessionTokens: 5000}, true},
		{"budget $0", Limits{}, false},
		{"budget 0 tokens", Limits{}, false},
		{"budget the project for next quarter", Limits{}, false},
		{"what is the budget $5 about", Limits{}, false},
		{"budget 5", Limits{}, false},
		{"budget", Limits{}, false},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got, ok := ParseBudgetCommand(tt.text)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("ParseBudgetCommand(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}

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

func TestParseContinue(t *testing.T) {
	for _, tt := range []struct {
		text, want string
		ok         bool
	}{
		{"continue https://github.com/acme/app/pull/7", "https://github.com/acme/app/pull/7", true},
		{"Continue <https://acme.slack.com/archives/C1/p1700000000000100>", "https://acme.slack.com/archives/C1/p1700000000000100", true},
		{"continue <https://github.com/acme/app/issues/3|acme/app#3>", "https://github.com/acme/app/issues/3", true},
		{"look at https://github.com/acme/app/pull/7", "", false},
		{"continue the work on https://github.com/acme/app/pull/7", "", false},
		{"continue", "", false},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got, ok := ParseContinue(tt.text)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("ParseContinue(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}
