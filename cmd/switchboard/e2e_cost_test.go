package main_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/pricing"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestTurnCost: a scripted turn with known token counts, in each wire
// format, on a model the shipped table prices, on one priced by the
// operator's SWITCHBOARD_PRICES file, and on one nobody prices:
// turn.completed and the session carry the tokens (cached ones apart) and
// the cost computed from the table, or a null cost; /metrics counts both
// by agent and installation.
func TestTurnCost(t *testing.T) {
	ms, hs := modelserver.Start(t)
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"prices":[{"model":"openai/gpt-ours","input":0.5,"output":1.5,"cache_read":0.05,"cache_write":0.5,
		"source":"our inference contract","as_of":"2026-11-01"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	maps.Copy(env, map[string]string{
		"OPENAI_API_KEY":     "test-key",
		"OPENAI_BASE_URL":    modelserver.OpenAIBaseURL(hs.URL),
		"SWITCHBOARD_PRICES": prices,
	})
	srv := startServer(t, t.TempDir(), env)

	// Anthropic reports input without the cached tokens; OpenAI counts the
	// cached ones in prompt_tokens, and the gateway takes them out.
	used := modelserver.Usage{Input: 1200, Output: 300, CacheRead: 20000, CacheWrite: 800}
	shipped, _ := pricing.Shipped().Lookup("anthropic/claude-sonnet-4-5")
	ours := pricing.Price{Input: 0.5, Output: 1.5, CacheRead: 0.05, CacheWrite: 0.5}
	tests := []struct {
		name, model string
		want        core.Usage
		cost        *float64
	}{
		{"shipped price", "anthropic/claude-sonnet-4-5",
			core.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 20000, CacheCreationInputTokens: 800}, nil},
		{"the operator's price", "openai/gpt-ours",
			core.Usage{InputTokens: 2000, OutputTokens: 300, CacheReadInputTokens: 20000}, nil},
		{"no price", "anthropic/claude-test",
			core.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 20000, CacheCreationInputTokens: 800}, nil},
	}
	tests[0].cost = costOf(shipped, tests[0].want)
	tests[1].cost = costOf(ours, tests[1].want)
	if shipped.Model == "" || *tests[0].cost == 0 {
		t.Fatal("the shipped table has no price for anthropic/claude-sonnet-4-5")
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("costed-%d", i)
			code, raw := srv.do("POST", "/v1/agents", map[string]any{"name": name, "model": tt.model, "system": "s"})
			if code != 201 {
				t.Fatalf("agent: %d %s", code, raw)
			}
			var a struct{ ID string }
			mustJSON(t, raw, &a)
			ms.Push(modelserver.Step{Text: "counted", Usage: used})
			id := srv.startSession(a.ID, "what does this cost?")
			_, evs := srv.waitIdle(id)

			var done struct {
				Usage   core.Usage `json:"usage"`
				CostUSD *float64   `json:"cost_usd"`
			}
			for _, e := range evs {
				if e.Type == core.TypeTurnCompleted {
					mustJSON(t, e.Body, &done)
					if !strings.Contains(string(e.Body), `"cost_usd":`) {
						t.Fatalf("turn.completed without cost_usd: %s", e.Body)
					}
				}
			}
			if done.Usage != tt.want || !sameUSD(done.CostUSD, tt.cost) {
				t.Fatalf("turn.completed usage %+v cost %v, want %+v cost %v", done.Usage, usdText(done.CostUSD), tt.want, usdText(tt.cost))
			}
			var view struct {
				Usage   core.Usage `json:"usage"`
				CostUSD *float64   `json:"cost_usd"`
			}
			code, raw = srv.do("GET", "/v1/sessions/"+id, nil)
			mustJSON(t, raw, &view)
			var fields map[string]json.RawMessage
			mustJSON(t, raw, &fields)
			if _, ok := fields["cost_usd"]; code != 200 || !ok || view.Usage != tt.want || !sameUSD(view.CostUSD, tt.cost) {
				t.Fatalf("session: %d usage %+v cost %v, want %+v cost %v (%s)", code, view.Usage, usdText(view.CostUSD), tt.want, usdText(tt.cost), raw)
			}

			// The turn is counted once its completion is logged: a moment
			// after the session shows it idle, its tokens before its cost.
			line := fmt.Sprintf(`switchboard_turn_tokens_total{agent=%q,installation="api",kind="cache_read"} 20000`, name)
			costLine := fmt.Sprintf(`switchboard_turn_cost_usd_total{agent=%q,installation="api"}`, name)
			wait := []string{line}
			if tt.cost != nil {
				wait = append(wait, costLine)
			}
			metrics := srv.metricsWith(wait...)
			if !strings.Contains(metrics, line) {
				t.Errorf("/metrics lacks %s", line)
			}
			if has := strings.Contains(metrics, costLine); has != (tt.cost != nil) {
				t.Errorf("/metrics has %s: %v, want %v", costLine, has, tt.cost != nil)
			}
		})
	}
}

func costOf(p pricing.Price, u core.Usage) *float64 {
	usd := p.Cost(u)
	return &usd
}

func sameUSD(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func usdText(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}
