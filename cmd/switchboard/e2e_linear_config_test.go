package main_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestLinearMisconfiguration: each bad Linear setting stops serve at once
// with one line naming the variable.
func TestLinearMisconfiguration(t *testing.T) {
	base := map[string]string{"LINEAR_CLIENT_ID": "id", "LINEAR_CLIENT_SECRET": "secret", "LINEAR_WEBHOOK_SECRET": "hook"}
	with := func(kv ...string) map[string]string {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	tests := []struct {
		name string // the variable the line must name
		env  map[string]string
	}{
		{"LINEAR_CLIENT_SECRET", with("LINEAR_CLIENT_SECRET", "")},
		{"LINEAR_WEBHOOK_SECRET", with("LINEAR_WEBHOOK_SECRET", "")},
		{"LINEAR_CLIENT_ID", map[string]string{"LINEAR_WEBHOOK_SECRET": "hook"}},
		{"LINEAR_API_URL", with("LINEAR_API_URL", "ftp://linear.example")},
		{"LINEAR_AUTHORIZE_URL", with("LINEAR_AUTHORIZE_URL", "not a url")},
		{"LINEAR_REQUESTS_PER_HOUR", with("LINEAR_REQUESTS_PER_HOUR", "0")},
		{"LINEAR_TOKEN_REFRESH_SECONDS", with("LINEAR_TOKEN_REFRESH_SECONDS", "soon")},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d/%s", i, tt.name), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			cmd := exec.CommandContext(ctx, serveBinary(t), "serve")
			cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+t.TempDir(), "SWITCHBOARD_ADDR="+anyPort)
			for k, v := range tt.env {
				if v != "" {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve accepted %v:\n%s", tt.env, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.name) {
				t.Fatalf("want one line naming %s, got:\n%s", tt.name, out)
			}
		})
	}
}
