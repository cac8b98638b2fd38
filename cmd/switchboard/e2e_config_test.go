package main_test

import "testing"

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
			wantOneLine(t, serveFails(t, t.TempDir(), map[string]string{tt.name: tt.value}), tt.name)
		})
	}
}
