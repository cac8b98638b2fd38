package playground

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// TestGatewayEnv: a real deployment's platform variables, store,
// addresses and keys never reach the playground's gateway; the rest of
// the environment does.
func TestGatewayEnv(t *testing.T) {
	environ := func() []string {
		return []string{"SLACK_BOT_TOKEN=xoxb-real", "SLACK_APP_TOKEN=xapp-real", "GITHUB_APP_PRIVATE_KEY=real", "LINEAR_CLIENT_SECRET=real",
			"SWITCHBOARD_STORE=postgres://db/real", "SWITCHBOARD_DATA_DIR=/srv/real", "SWITCHBOARD_MASTER_KEY=real", "SWITCHBOARD_PUBLIC_URL=https://real",
			"SWITCHBOARD_LOG_LEVEL=debug", "SWITCHBOARD_MODEL=anthropic/claude", "ANTHROPIC_API_KEY=sk-real", "PATH=/usr/bin"}
	}
	platforms := map[string]string{"SLACK_BOT_TOKEN": "xoxb-fake"}
	set := map[string]string{"SWITCHBOARD_DATA_DIR": "/tmp/dev"}
	tests := []struct {
		name     string
		scripted bool
		want     map[string]string // "" absent
	}{
		{"a real model", false, map[string]string{"SLACK_BOT_TOKEN": "xoxb-fake", "SLACK_APP_TOKEN": "", "GITHUB_APP_PRIVATE_KEY": "", "LINEAR_CLIENT_SECRET": "",
			"SWITCHBOARD_STORE": "", "SWITCHBOARD_DATA_DIR": "/tmp/dev", "SWITCHBOARD_MASTER_KEY": "", "SWITCHBOARD_PUBLIC_URL": "",
			"SWITCHBOARD_LOG_LEVEL": "debug", "SWITCHBOARD_MODEL": "anthropic/claude", "ANTHROPIC_API_KEY": "sk-real", "PATH": "/usr/bin", "SWITCHBOARD_SANDBOX": ""}},
		{"the scripted model", true, map[string]string{"SWITCHBOARD_MODEL": "", "ANTHROPIC_API_KEY": "", "SWITCHBOARD_SANDBOX": "none", "SLACK_APP_TOKEN": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := gatewayEnv(environ, platforms, set, tt.scripted)
			for k, want := range tt.want {
				if got := env[k]; got != want {
					t.Errorf("%s=%q, want %q", k, got, want)
				}
			}
			getenv := env.command(command.Env{}).Getenv
			if getenv("SWITCHBOARD_DATA_DIR") != "/tmp/dev" {
				t.Error("the gateway's Getenv does not read the playground's variables")
			}
		})
	}
}

// TestDevRefusesBadFlags: loopback addresses only, no arguments; a model
// without its key named before anything starts.
func TestDevRefusesBadFlags(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().String()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		says string
	}{
		{"a public page", []string{"--addr", "0.0.0.0:8081"}, nil, 2, "--addr 0.0.0.0:8081: the playground listens on loopback only"},
		{"a public gateway", []string{"--gateway-addr", "[::]:8080"}, nil, 2, "--gateway-addr [::]:8080: the playground listens on loopback only"},
		{"no port", []string{"--addr", "localhost"}, nil, 2, `--addr "localhost": want host:port`},
		{"an argument", []string{"now"}, nil, 2, "dev takes no arguments"},
		{"a page address in use", []string{"--addr", busy}, nil, 1, "--addr " + busy + ": listen tcp " + busy},
		{"a gateway address in use", []string{"--addr", "127.0.0.1:0", "--gateway-addr", busy}, nil, 1, "--gateway-addr " + busy + ": listen tcp " + busy},
		{"a model without its key", nil, map[string]string{"SWITCHBOARD_MODEL": "anthropic/claude-sonnet-4-5"}, 1, "ANTHROPIC_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := command.Env{Getenv: func(k string) string { return tt.env[k] }, Stdout: &out, Stderr: &errOut}
			served := false
			deps := Deps{Serve: func(context.Context, command.Env, []string) int { served = true; return 0 }}
			if code := Command(deps).Run(context.Background(), env, tt.args); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if !strings.Contains(errOut.String(), tt.says) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tt.says)
			}
			if served {
				t.Error("the gateway started")
			}
		})
	}
}

// TestDevGatewayFailsToStart: a gateway that stops as it starts ends dev
// with exit 1 and a line saying so; nothing is left in the temporary
// directory.
func TestDevGatewayFailsToStart(t *testing.T) {
	var out, errOut bytes.Buffer
	var dataDir string
	deps := Deps{Serve: func(_ context.Context, env command.Env, _ []string) int {
		dataDir = env.Getenv("SWITCHBOARD_DATA_DIR")
		fmt.Fprintln(env.Stderr, "switchboard: SWITCHBOARD_LOG_LEVEL=loud: want debug, info, warn or error")
		return 1
	}}
	env := command.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut}
	if code := Command(deps).Run(context.Background(), env, []string{"--scripted", "--addr", "127.0.0.1:0", "--gateway-addr", "127.0.0.1:0"}); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"SWITCHBOARD_LOG_LEVEL=loud", "switchboard dev: the gateway stopped as it started (exit 1)"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if dataDir == "" {
		t.Fatal("the gateway was given no data directory")
	}
	if _, err := os.Stat(filepath.Dir(dataDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dev left %s behind (%v)", filepath.Dir(dataDir), err)
	}
}
