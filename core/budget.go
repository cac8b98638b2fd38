package core

import (
	"fmt"
	"strconv"
	"strings"
)

// FormatBudget writes a budget's value as a person reads it: "$5.00",
// "200,000 tokens".
func FormatBudget(name string, value float64) string {
	switch name {
	case BudgetCostUSD:
		return fmt.Sprintf("$%.2f", value)
	case BudgetTurns:
		if value == 1 {
			return "1 turn"
		}
		return groupThousands(int64(value)) + " turns"
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
	if l.MaxTurns > 0 {
		set = append(set, FormatBudget(BudgetTurns, float64(l.MaxTurns)))
	}
	return strings.Join(set, " and ")
}

// PauseTitle is how a platform titles a turn paused by the budget name
// (a BudgetPause's): "Paused: session budget", "Paused: turn limit".
func PauseTitle(name string) string {
	if name == BudgetTurns {
		return "Paused: turn limit"
	}
	return "Paused: session budget"
}

// RaiseCommand is the thread command that sets the budget over paused to
// n times its limit: "budget 400000 tokens", "budget $10.00",
// "budget 4 turns".
func RaiseCommand(over *BudgetPause, n float64) string {
	switch over.Name {
	case BudgetCostUSD:
		return "budget $" + strconv.FormatFloat(over.Limit*n, 'f', 2, 64)
	case BudgetTurns:
		return fmt.Sprintf("budget %d turns", int64(over.Limit*n))
	}
	return fmt.Sprintf("budget %d tokens", int64(over.Limit*n))
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
