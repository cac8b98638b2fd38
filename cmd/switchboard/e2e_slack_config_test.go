package main_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestSlackMisconfiguration: each bad Slack setting stops serve at once
// with one line naming the variable.
func TestSlackMisconfiguration(t *testing.T) {
	fake := fakeslack.Start(t)
	good := fake.AddTeam(fakeslack.Team{ID: "T0CF", Name: "Config"})
	base := map[string]string{"SLACK_SIGNING_SECRET": "s3cret", "SLACK_BOT_TOKEN": good, "SLACK_API_URL": fake.APIURL()}
	// with is the working single-workspace setup with some settings changed.
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
		{"SLACK_SIGNING_SECRET", map[string]string{"SLACK_SIGNING_SECRET": "s3cret"}},
		{"SLACK_SIGNING_SECRET", map[string]string{"SLACK_BOT_TOKEN": good}},
		{"SLACK_CLIENT_SECRET", map[string]string{"SLACK_SIGNING_SECRET": "s3cret", "SLACK_CLIENT_ID": "1.2"}},
		{"SLACK_CLIENT_ID", map[string]string{"SLACK_SIGNING_SECRET": "s3cret", "SLACK_CLIENT_SECRET": "x"}},
		{"SLACK_BOT_TOKEN", with("SLACK_BOT_TOKEN", "xoxp-user-token")},
		{"SLACK_BOT_TOKEN", with("SLACK_BOT_TOKEN", "xoxb-revoked-or-wrong")},
		{"SLACK_API_URL", with("SLACK_API_URL", "ftp://slack.example")},
		{"SLACK_ALLOW_BOTS", with("SLACK_ALLOW_BOTS", "maybe")},
		{"SLACK_HISTORY_MESSAGES", with("SLACK_HISTORY_MESSAGES", "0")},
		{"SLACK_TOKEN_REFRESH_SECONDS", with("SLACK_TOKEN_REFRESH_SECONDS", "soon")},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d/%s", i, tt.name), func(t *testing.T) {
			env := tt.env
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			cmd := exec.CommandContext(ctx, serveBinary(t), "serve")
			cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+t.TempDir(), "SWITCHBOARD_ADDR="+anyPort)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve accepted %v:\n%s", env, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.name) {
				t.Fatalf("want one line naming %s, got:\n%s", tt.name, out)
			}
		})
	}
}
