package providers_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

func TestParseBudgetCommand(t *testing.T) {
	for _, tt := range []struct {
		text string
		want core.Limits
		ok   bool
	}{
		{"budget $5", core.Limits{MaxSessionCostUSD: 5}, true},
		{"  Budget $ 2.50. ", core.Limits{MaxSessionCostUSD: 2.5}, true},
		{"budget 3 usd", core.Limits{MaxSessionCostUSD: 3}, true},
		{"budget 200k tokens", core.Limits{MaxSessionTokens: 200_000}, true},
		{"budget 1.5M tokens", core.Limits{MaxSessionTokens: 1_500_000}, true},
		{"budget 5000 token", core.Limits{MaxSessionTokens: 5000}, true},
		{"budget 4 turns", core.Limits{MaxTurns: 4}, true},
		{"Budget 1 turn.", core.Limits{MaxTurns: 1}, true},
		{"budget 0 turns", core.Limits{}, false},
		{"budget 2.5 turns", core.Limits{}, false},
		{"budget $0", core.Limits{}, false},
		{"budget 0 tokens", core.Limits{}, false},
		{"budget the project for next quarter", core.Limits{}, false},
		{"what is the budget $5 about", core.Limits{}, false},
		{"budget 5", core.Limits{}, false},
		{"budget", core.Limits{}, false},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got, ok := providers.ParseBudgetCommand(tt.text)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("providers.ParseBudgetCommand(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
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
			got, ok := providers.ParseContinue(tt.text)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("providers.ParseContinue(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseEditorCommand(t *testing.T) {
	for text, want := range map[string]bool{
		"editor": true, " Editor. ": true, "EDITOR!": true,
		"editor please": false, "open it in my editor": false, "": false,
	} {
		t.Run(text, func(t *testing.T) {
			if got := providers.ParseEditorCommand(text); got != want {
				t.Fatalf("providers.ParseEditorCommand(%q) = %v, want %v", text, got, want)
			}
		})
	}
}
