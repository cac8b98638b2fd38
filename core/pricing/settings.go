package pricing

import (
	"fmt"
	"os"

	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the price table's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_PRICES", Flag: "prices", Usage: "a JSON price file whose rows replace or add to the shipped prices (docs/cost.md)"},
	}
}

// LoadConfig is the shipped table with the rows of SWITCHBOARD_PRICES,
// when it names a file; a file that cannot be read or holds a bad row
// fails with one line naming the variable.
func LoadConfig(s settings.Values) (*Table, error) {
	t := Shipped()
	path := s["SWITCHBOARD_PRICES"]
	if path == "" {
		return t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_PRICES: %w", err)
	}
	defer f.Close()
	rows, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_PRICES=%s: %w", path, err)
	}
	return t.With(rows), nil
}
