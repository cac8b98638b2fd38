package providers

import (
	"strings"
	"testing"
)

// TestAppRender: a manifest prints as JSON or YAML in its fields' order,
// and an unknown format is an error naming the known ones.
func TestAppRender(t *testing.T) {
	type inner struct {
		B []string `json:"b" yaml:"b"`
	}
	a := App{Manifest: struct {
		Z string `json:"z" yaml:"z"`
		A inner  `json:"a" yaml:"a"`
	}{Z: "first", A: inner{B: []string{"x"}}}}
	for format, want := range map[string]string{
		FormatJSON: "{\n  \"z\": \"first\",\n  \"a\": {\n    \"b\": [\n      \"x\"\n    ]\n  }\n}\n",
		FormatYAML: "z: first\na:\n  b:\n    - x\n",
	} {
		got, err := a.Render(format)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", format, got, err, want)
		}
	}
	if _, err := a.Render("toml"); err == nil || !strings.Contains(err.Error(), "yaml or json") {
		t.Errorf("toml: err = %v", err)
	}
}
