package pricing_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/pricing"
	"github.com/switchboardhq/switchboard/core/settings"
)

func TestCost(t *testing.T) {
	table := (&pricing.Table{}).With([]pricing.Price{
		{Model: "anthropic/m", Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, Source: "s", AsOf: "2026-11-01"},
		{Model: "openai/free", Source: "s", AsOf: "2026-11-01"},
	})
	tests := []struct {
		name  string
		model string
		u     core.Usage
		want  float64
		ok    bool
	}{
		{"each kind at its price", "anthropic/m", core.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadInputTokens: 10000, CacheCreationInputTokens: 400}, 0.003 + 0.003 + 0.003 + 0.0015, true},
		{"a million input tokens", "anthropic/m", core.Usage{InputTokens: 1_000_000}, 3, true},
		{"nothing used", "anthropic/m", core.Usage{}, 0, true},
		{"a model priced at zero", "openai/free", core.Usage{InputTokens: 5}, 0, true},
		{"an unknown model", "anthropic/other", core.Usage{InputTokens: 5}, 0, false},
		{"no guess from a longer name", "anthropic/m-20250101", core.Usage{InputTokens: 5}, 0, false},
		{"no guess without the vendor", "m", core.Usage{InputTokens: 5}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := table.Cost(tt.model, tt.u)
			if ok != tt.ok || got != core.RoundUSD(tt.want) {
				t.Fatalf("Cost = %v, %v; want %v, %v", got, ok, core.RoundUSD(tt.want), tt.ok)
			}
		})
	}
}

func TestShipped(t *testing.T) {
	rows := pricing.Shipped().Prices()
	if len(rows) == 0 {
		t.Fatal("the shipped table is empty")
	}
	for _, p := range rows {
		if !strings.HasPrefix(p.Model, "anthropic/") && !strings.HasPrefix(p.Model, "openai/") {
			t.Errorf("%s: the shipped table prices only the two clients' models", p.Model)
		}
		if !strings.HasPrefix(p.Source, "https://") {
			t.Errorf("%s: source %q is not an address", p.Model, p.Source)
		}
		if p.Input <= 0 || p.Output <= 0 {
			t.Errorf("%s: %+v", p.Model, p)
		}
	}
}

// TestShippedDocumented: docs/cost.md lists every shipped row with its
// prices, so the page a person reads is the table the gateway uses.
func TestShippedDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cost.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pricing.Shipped().Prices() {
		if !strings.Contains(string(doc), "| `"+p.Model+"` |") {
			t.Errorf("docs/cost.md has no row for %s", p.Model)
		}
	}
}

func TestParse(t *testing.T) {
	const row = `"input":1,"output":2,"cache_read":0.1,"cache_write":1.25,"source":"https://example.com/p","as_of":"2026-10-01"`
	tests := []struct {
		name, file, err string
	}{
		{"good", `{"prices":[{"model":"openai/x",` + row + `}]}`, ""},
		{"empty list", `{"prices":[]}`, ""},
		{"not JSON", `prices: []`, "read prices"},
		{"unknown field", `{"prices":[{"model":"openai/x","currency":"EUR",` + row + `}]}`, `unknown field "currency"`},
		{"no vendor", `{"prices":[{"model":"x",` + row + `}]}`, `prices[0]: model "x": want vendor/model`},
		{"negative", `{"prices":[{"model":"openai/x","input":-1,"output":2,"cache_read":0,"cache_write":0,"source":"s","as_of":"2026-10-01"}]}`, "prices[0]: model \"openai/x\": input must be"},
		{"no source", `{"prices":[{"model":"openai/x","input":1,"output":2,"cache_read":0,"cache_write":0,"as_of":"2026-10-01"}]}`, "source is required"},
		{"bad date", `{"prices":[{"model":"openai/x","input":1,"output":2,"cache_read":0,"cache_write":0,"source":"s","as_of":"October"}]}`, `as_of "October"`},
		{"twice", `{"prices":[{"model":"openai/x",` + row + `},{"model":"openai/x",` + row + `}]}`, `prices[1]: model "openai/x" is listed twice`},
		{"two values", `{"prices":[]} {}`, "more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pricing.Parse(strings.NewReader(tt.file))
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Parse: %v, want %q", err, tt.err)
			}
		})
	}
}

// TestLoadConfig: the file's rows replace the shipped row of their model
// and add new ones; the rest of the shipped table stays.
func TestLoadConfig(t *testing.T) {
	shipped := pricing.Shipped().Prices()
	replaced := shipped[0].Model
	path := filepath.Join(t.TempDir(), "prices.json")
	file := `{"prices":[
		{"model":"` + replaced + `","input":1,"output":1,"cache_read":1,"cache_write":1,"source":"our contract","as_of":"2026-11-20"},
		{"model":"openai/llama-local","input":0,"output":0,"cache_read":0,"cache_write":0,"source":"our own GPUs","as_of":"2026-11-20"}]}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	table, err := pricing.LoadConfig(settings.Values{"SWITCHBOARD_PRICES": path})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := table.Lookup(replaced); p.Source != "our contract" || p.Input != 1 {
		t.Errorf("%s = %+v, want the file's row", replaced, p)
	}
	if _, ok := table.Lookup("openai/llama-local"); !ok {
		t.Error("the file's new model is not priced")
	}
	if got := len(table.Prices()); got != len(shipped)+1 {
		t.Errorf("%d rows, want the %d shipped and one added", got, len(shipped))
	}

	for name, v := range map[string]string{
		"missing file": filepath.Join(t.TempDir(), "nope.json"),
		"bad row":      writeFile(t, `{"prices":[{"model":"nope"}]}`),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := pricing.LoadConfig(settings.Values{"SWITCHBOARD_PRICES": v})
			if err == nil || !strings.HasPrefix(err.Error(), "SWITCHBOARD_PRICES") {
				t.Fatalf("LoadConfig: %v, want an error naming SWITCHBOARD_PRICES", err)
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
