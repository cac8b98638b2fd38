package core

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// budgetCommand is a thread command that sets a session budget:
// "budget $5", "budget 5 usd", "budget 200k tokens", "budget 2M tokens".
var budgetCommand = regexp.MustCompile(`(?i)^budget\s+(?:\$\s*([0-9]+(?:\.[0-9]+)?)|([0-9]+(?:\.[0-9]+)?)\s*(?:usd|dollars?)|([0-9]+(?:\.[0-9]+)?)\s*([km]?)\s*tokens?)[.!]?$`)

// ParseBudgetCommand reads a thread command that sets the session's
// budget, the mention of the agent already taken out. ok is false for
// any other text, which reaches the agent as a message.
func ParseBudgetCommand(text string) (l Limits, ok bool) {
	m := budgetCommand.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Limits{}, false
	}
	switch {
	case m[1] != "" || m[2] != "":
		usd, err := strconv.ParseFloat(m[1]+m[2], 64)
		if err != nil || usd <= 0 {
			return Limits{}, false
		}
		return Limits{MaxSessionCostUSD: usd}, true
	default:
		n, err := strconv.ParseFloat(m[3], 64)
		switch strings.ToLower(m[4]) {
		case "k":
			n *= 1e3
		case "m":
			n *= 1e6
		}
		if err != nil || n < 1 || n > 1e15 {
			return Limits{}, false
		}
		return Limits{MaxSessionTokens: int64(n)}, true
	}
}

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
