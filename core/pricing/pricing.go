// Package pricing owns the price table that turns a model's token usage
// into an estimated cost in US dollars. The gateway ships a table for the
// models its two model clients know (prices.json, each row naming its
// source and the date it was read), and an operator's file
// (SWITCHBOARD_PRICES) replaces or adds rows. A model with no row is
// counted in tokens only: its cost is never guessed, not even from a
// similar name.
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Price is one model's row: US dollars per million tokens of each kind.
type Price struct {
	// Model is the agent's model string, "anthropic/<model>" or
	// "openai/<model>", matched exactly.
	Model  string  `json:"model"`
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheRead prices the prompt tokens read from the vendor's cache,
	// CacheWrite those written to it (Anthropic's five-minute writes;
	// OpenAI charges none, so its rows repeat the input price).
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	// Source is where the price was read, AsOf the day (YYYY-MM-DD).
	Source string `json:"source"`
	AsOf   string `json:"as_of"`
	Note   string `json:"note,omitempty"`
}

// Cost is what u costs at p, rounded to the nano-dollar.
func (p Price) Cost(u core.Usage) float64 {
	micro := float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadInputTokens)*p.CacheRead + float64(u.CacheCreationInputTokens)*p.CacheWrite
	return core.RoundUSD(micro / 1e6)
}

func (p Price) check() error {
	vendor, name, ok := strings.Cut(p.Model, "/")
	if !ok || vendor == "" || name == "" {
		return fmt.Errorf("model %q: want vendor/model, e.g. anthropic/claude-sonnet-4-5", p.Model)
	}
	for _, f := range []struct {
		field string
		v     float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
		if f.v < 0 || f.v != f.v {
			return fmt.Errorf("model %q: %s must be a price of zero or more dollars per million tokens", p.Model, f.field)
		}
	}
	if strings.TrimSpace(p.Source) == "" {
		return fmt.Errorf("model %q: source is required: where the price was read", p.Model)
	}
	if _, err := time.Parse(time.DateOnly, p.AsOf); err != nil {
		return fmt.Errorf("model %q: as_of %q: want the day the price was read, YYYY-MM-DD", p.Model, p.AsOf)
	}
	return nil
}

// Table is a set of prices by model. The zero value prices nothing.
type Table struct {
	byModel map[string]Price
}

//go:embed prices.json
var shipped []byte

// Shipped is the table the gateway ships.
func Shipped() *Table {
	rows, err := Parse(bytes.NewReader(shipped))
	if err != nil {
		panic(fmt.Sprintf("pricing: the shipped prices.json: %v", err))
	}
	return (&Table{}).With(rows)
}

// Parse reads a price file: {"prices":[{model, input, output, cache_read,
// cache_write, source, as_of, note?}, …]}. Unknown fields, a model listed
// twice and a row missing its source or date are errors that name the row.
func Parse(r io.Reader) ([]Price, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var file struct {
		Prices []Price `json:"prices"`
	}
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	if dec.More() {
		return nil, errors.New("read prices: more than one JSON value")
	}
	seen := map[string]bool{}
	for i, p := range file.Prices {
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("prices[%d]: %w", i, err)
		}
		if seen[p.Model] {
			return nil, fmt.Errorf("prices[%d]: model %q is listed twice", i, p.Model)
		}
		seen[p.Model] = true
	}
	return file.Prices, nil
}

// With returns a table with rows added to t's, a row replacing t's row of
// the same model.
func (t *Table) With(rows []Price) *Table {
	out := &Table{byModel: maps.Clone(t.byModel)}
	if out.byModel == nil {
		out.byModel = map[string]Price{}
	}
	for _, p := range rows {
		out.byModel[p.Model] = p
	}
	return out
}

// Lookup is model's row, if it has one.
func (t *Table) Lookup(model string) (Price, bool) {
	p, ok := t.byModel[model]
	return p, ok
}

// Cost is the estimated cost of u on model; ok is false when the table has
// no price for model.
func (t *Table) Cost(model string, u core.Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// Prices lists the rows by model.
func (t *Table) Prices() []Price {
	return slices.SortedFunc(maps.Values(t.byModel), func(a, b Price) int { return strings.Compare(a.Model, b.Model) })
}
