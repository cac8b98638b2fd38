package sandbox

import (
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// TestHandsToolsOnlyWithSandbox: the model is offered the hands tools with a sandbox,
// and none without one.
func TestHandsToolsOnlyWithSandbox(t *testing.T) {
	s, err := LoadSettings(defaults(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if tools := HandsTools(nil, s); len(tools) != 0 {
		t.Errorf("%d tools without a sandbox", len(tools))
	}
	var names []string
	for _, tool := range HandsTools(&Docker{}, s) {
		names = append(names, tool.Def().Name)
	}
	if !slices.Equal(names, hands.Names()) {
		t.Errorf("tools %q, want %q", names, hands.Names())
	}
}
