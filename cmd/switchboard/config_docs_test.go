package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
)

// configurationDoc is the reference of every setting; each is a row of a
// Markdown table: the variable in backticks, then serve's flag in backticks
// with its dash, or an empty cell for a variable serve has no flag for.
const configurationDoc = "../../docs/configuration.md"

// TestConfigurationDocMatchesServeFlags: an operator reads the settings
// in the docs, so each of serve's options must be there with its exact
// flag, and each flag there must be an option.
func TestConfigurationDocMatchesServeFlags(t *testing.T) {
	raw, err := os.ReadFile(configurationDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docMismatches(string(raw), allServeOptions()) {
		t.Errorf("%s: %s", configurationDoc, p)
	}
}

func TestConfigurationDocMismatches(t *testing.T) {
	opts := []settings.Option{{Env: "X_ADDR", Flag: "addr"}, {Env: "X_DIR", Flag: "data-dir"}}
	const head = "| variable | flag | meaning |\n|---|---|---|\n"
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"agree", head + "| `X_ADDR` | `--addr` | where |\n| `X_DIR` | `--data-dir` | a \\| b |\n", nil},
		{"a variable without a flag", head + "| `X_ADDR` | `--addr` | |\n| `X_DIR` | `--data-dir` | |\n| `X_KEY` | | a key |\n", nil},
		{"rows over several tables", "| `X_ADDR` | `--addr` |\n\ntext\n\n| `X_DIR` | `--data-dir` |\n", nil},
		{"an option missing", head + "| `X_ADDR` | `--addr` | |\n", []string{"no row for X_DIR (flag --data-dir)"}},
		{"a wrong flag", head + "| `X_ADDR` | `--address` | |\n| `X_DIR` | `--data-dir` | |\n", []string{
			"line 3: X_ADDR has flag \"--address\", serve has \"--addr\"", "no row for X_ADDR (flag --addr)"}},
		{"an option without its flag", head + "| `X_ADDR` | | |\n| `X_DIR` | `--data-dir` | |\n", []string{
			"line 3: X_ADDR has flag \"\", serve has \"--addr\"", "no row for X_ADDR (flag --addr)"}},
		{"a flag that is no option", head + "| `X_ADDR` | `--addr` | |\n| `X_DIR` | `--data-dir` | |\n| `X_OLD` | `--old` | |\n", []string{
			"line 5: X_OLD with flag --old is not an option of serve"}},
		{"a flag with one dash", head + "| `X_ADDR` | `-addr` | |\n| `X_DIR` | `--data-dir` | |\n", []string{
			"line 3: X_ADDR has flag \"-addr\", serve has \"--addr\"", "no row for X_ADDR (flag --addr)"}},
		{"a malformed flag cell", head + "| `X_ADDR` | addr | |\n", []string{
			"line 3: the second cell of X_ADDR, \"addr\", is neither a flag in backticks nor empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := docMismatches(tt.doc, opts)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// docMismatches lists where doc and opts disagree, both ways.
func docMismatches(doc string, opts []settings.Option) []string {
	rows, err := settingRows(doc)
	if err != nil {
		return []string{err.Error()}
	}
	flags := map[string]string{}
	for _, o := range opts {
		flags[o.Env] = "--" + o.Flag
	}
	var out []string
	documented := map[string]bool{}
	for _, r := range rows {
		want, isOption := flags[r.env]
		switch {
		case isOption && r.flag == want:
			documented[r.env] = true
		case isOption:
			out = append(out, fmt.Sprintf("line %d: %s has flag %q, serve has %q", r.line, r.env, r.flag, want))
		case r.flag != "":
			out = append(out, fmt.Sprintf("line %d: %s with flag %s is not an option of serve", r.line, r.env, r.flag))
		}
	}
	for _, o := range opts {
		if !documented[o.Env] {
			out = append(out, fmt.Sprintf("no row for %s (flag --%s)", o.Env, o.Flag))
		}
	}
	return out
}

// settingRow is one documented setting: its variable and flag ("" when it
// has none), and its line in the file.
type settingRow struct {
	env, flag string
	line      int
}

// settingRows collects the rows, of every table in doc, whose first cell
// is a variable; their second cell must be a flag or empty.
func settingRows(doc string) ([]settingRow, error) {
	envCell := regexp.MustCompile("^`([A-Z][A-Z0-9_]*)`$")
	flagCell := regexp.MustCompile("^`(--?[a-z0-9][a-z0-9-]*)`$")
	var rows []settingRow
	for i, line := range strings.Split(doc, "\n") {
		cells := tableCells(line)
		if len(cells) < 2 {
			continue
		}
		m := envCell.FindStringSubmatch(cells[0])
		if m == nil {
			continue
		}
		r := settingRow{env: m[1], line: i + 1}
		if cells[1] != "" {
			f := flagCell.FindStringSubmatch(cells[1])
			if f == nil {
				return nil, fmt.Errorf("line %d: the second cell of %s, %q, is neither a flag in backticks nor empty", i+1, r.env, cells[1])
			}
			r.flag = f[1]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// tableCells splits a Markdown table row into its trimmed cells; nil when
// line is not a row. An escaped pipe (\|) stays inside its cell.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}
