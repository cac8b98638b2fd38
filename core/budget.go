package core

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatBudget writes a budget's value as a person reads it: "$5.00",
// "200,000 tokens".
func FormatBudget(name string, value float64) string {
	if name == BudgetCostUSD {
		return fmt.Sprintf("$%.2f", value)
	}
	return groupThousands(int64(value)) + " tokens"
}

// BudgetsText names the session budgets l sets, as a person reads them
// ("200,000 tokens and $5.00"); "" when it sets none.
func (l Limits) BudgetsText() string {
	var set []string
	if l.MaxSessionTokens > 0 {
		set = append(set, FormatBudget(BudgetTokens, float64(l.MaxSessionTokens)))
	}
	if l.MaxSessionCostUSD > 0 {
		set = append(set, FormatBudget(BudgetCostUSD, l.MaxSessionCostUSD))
	}
	return strings.Join(set, " and ")
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
