package main_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMisconfigurationNamesTheVariable: each bad setting stops serve at
// once with one line that names the variable.
func TestMisconfigurationNamesTheVariable(t *testing.T) {
	tests := []struct{ name, value string }{
		{"SWITCHBOARD_WORKERS", "many"},
		{"SWITCHBOARD_WORKERS", "0"},
		{"SWITCHBOARD_MODEL", "claude"},
		{"SWITCHBOARD_MODEL", "google/gemini"},
		{"SWITCHBOARD_ADDR", "nowhere"},
		{"SWITCHBOARD_COMPACT_FRACTION", "2"},
		{"SWITCHBOARD_TURN_SECONDS", "-5"},
		{"SWITCHBOARD_LOG_LEVEL", "chatty"},
		{"SWITCHBOARD_LOG_FORMAT", "xml"},
		{"SWITCHBOARD_MAX_BODY_BYTES", "12"},
		{"SWITCHBOARD_MASTER_KEY", "short"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			cmd := exec.CommandContext(ctx, binPath, "serve")
			cmd.Env = append(os.Environ(), "SWITCHBOARD_DATA_DIR="+t.TempDir(), "SWITCHBOARD_ADDR="+anyPort, tt.name+"="+tt.value)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve accepted %s=%s:\n%s", tt.name, tt.value, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.name) {
				t.Fatalf("want one line naming %s, got:\n%s", tt.name, out)
			}
		})
	}
}
