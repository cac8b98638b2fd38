package cli

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// TestAppSetup: the command reads the public URL from its flag or the
// environment, passes on only the switches given, picks one format, and
// prints the manifest on stdout and the steps on stderr; a bad command
// line exits 2 and the set-up's error 1.
func TestAppSetup(t *testing.T) {
	var got AppRequest
	setup := AppSetup{Platform: "chat", Label: "Chat", Name: "manifest", Summary: "print it",
		Switches: []AppSwitch{{Flag: "socket", Usage: "over a socket"}}, Formats: []string{"yaml", "json"},
		Render: func(req AppRequest) (AppOutput, error) {
			got = req
			if req.PublicURL == "" {
				return AppOutput{}, errors.New("no public URL")
			}
			return AppOutput{Manifest: "name: chat\n", Steps: []string{"paste it", "restart"}}, nil
		}}
	cmd := Apps([]AppSetup{setup})[0]
	for _, tc := range []struct {
		name, args, env string
		code            int
		url, format     string
		set             map[string]bool
		stderr          string
	}{
		{name: "flag", args: "manifest --public-url https://x.example", url: "https://x.example", format: "yaml", set: map[string]bool{}, stderr: "1. paste it\n2. restart\n"},
		{name: "environment", args: "manifest --json", env: "https://env.example", url: "https://env.example", format: "json", set: map[string]bool{}},
		{name: "switch given", args: "manifest --socket=false --public-url https://x.example", url: "https://x.example", format: "yaml", set: map[string]bool{"socket": false}},
		{name: "two formats", args: "manifest --json --yaml", code: 2, stderr: "choose one format"},
		{name: "an argument", args: "manifest extra", code: 2, stderr: "takes no arguments"},
		{name: "unknown subcommand", args: "manifets", code: 2, stderr: `did you mean "manifest"?`},
		{name: "no subcommand", args: "", code: 2, stderr: "missing subcommand"},
		{name: "set-up error", args: "manifest", code: 1, stderr: "chat manifest: no public URL"},
		{name: "a bare host", args: "manifest --public-url x.example", code: 2, stderr: `--public-url "x.example": want an https URL`},
		{name: "a bare host from the environment", args: "manifest", env: "x.example", code: 2, stderr: `--public-url "x.example": want an https URL`},
		{name: "plain http warned", args: "manifest --public-url http://127.0.0.1:8080", url: "http://127.0.0.1:8080", format: "yaml", set: map[string]bool{}, stderr: "warning: http://127.0.0.1:8080 is not https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = AppRequest{}
			var out, errOut bytes.Buffer
			env := command.Env{Getenv: func(k string) string {
				if k == "SWITCHBOARD_PUBLIC_URL" {
					return tc.env
				}
				return ""
			}, Stdout: &out, Stderr: &errOut}
			code := cmd.Run(context.Background(), env, strings.Fields(tc.args))
			if code != tc.code || !strings.Contains(errOut.String(), tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tc.code, tc.stderr)
			}
			if tc.code != 0 {
				return
			}
			if got.PublicURL != tc.url || got.Format != tc.format || !maps.Equal(got.Set, tc.set) {
				t.Errorf("request %+v, want url %q format %q set %v", got, tc.url, tc.format, tc.set)
			}
			if out.String() != "name: chat\n" {
				t.Errorf("stdout %q, want the manifest alone", out.String())
			}
		})
	}
	if len(cmd.Subcommands) != 1 || len(cmd.Subcommands[0].Flags) != 4 {
		t.Errorf("the tree has %+v, want manifest with --public-url, --socket, --yaml, --json", cmd.Subcommands)
	}
}
