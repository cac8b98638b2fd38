package providers

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// The commands a person may give the agent in a thread, on any platform,
// the mention of the agent taken out: each provider reads them from a
// message before it is routed as one.

// budgetCommand is a thread command that sets a session budget:
// "budget $5", "budget 5 usd", "budget 200k tokens", "budget 2M tokens";
// "budget 10 turns" sets the session's max_turns.
var budgetCommand = regexp.MustCompile(`(?i)^budget\s+(?:\$\s*([0-9]+(?:\.[0-9]+)?)|([0-9]+(?:\.[0-9]+)?)\s*(?:usd|dollars?)|([0-9]+(?:\.[0-9]+)?)\s*([km]?)\s*tokens?|([0-9]+)\s*turns?)[.!]?$`)

// ParseBudgetCommand reads a thread command that sets the session's
// budget, the mention of the agent already taken out. ok is false for
// any other text, which reaches the agent as a message.
func ParseBudgetCommand(text string) (l core.Limits, ok bool) {
	m := budgetCommand.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return core.Limits{}, false
	}
	switch {
	case m[5] != "":
		n, err := strconv.Atoi(m[5])
		if err != nil || n < 1 {
			return core.Limits{}, false
		}
		return core.Limits{MaxTurns: n}, true
	case m[1] != "" || m[2] != "":
		usd, err := strconv.ParseFloat(m[1]+m[2], 64)
		if err != nil || usd <= 0 {
			return core.Limits{}, false
		}
		return core.Limits{MaxSessionCostUSD: usd}, true
	default:
		n, err := strconv.ParseFloat(m[3], 64)
		switch strings.ToLower(m[4]) {
		case "k":
			n *= 1e3
		case "m":
			n *= 1e6
		}
		if err != nil || n < 1 || n > 1e15 {
			return core.Limits{}, false
		}
		return core.Limits{MaxSessionTokens: int64(n)}, true
	}
}

// continueCommand is a thread command that links the thread to the
// session of another place: "continue <URL>" (Slack wraps an address in
// <…>, with |text after it when it has a label).
var continueCommand = regexp.MustCompile(`(?i)^continue\s+<?(https?://[^\s|>]+)(?:\|[^>]*)?>?\s*$`)

// ParseContinue reads "continue <URL>", the mention taken out; ok is
// false for any other text (a bare URL among other words is a message).
func ParseContinue(text string) (string, bool) {
	m := continueCommand.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// editorCommand is the thread command that asks for a way to open the
// thread's session in the asker's editor: "editor".
var editorCommand = regexp.MustCompile(`(?i)^editor[.!?]?$`)

// ParseEditorCommand reads "editor", the mention taken out.
func ParseEditorCommand(text string) bool {
	return editorCommand.MatchString(strings.TrimSpace(text))
}
