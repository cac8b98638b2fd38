package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
	"github.com/switchboardhq/switchboard/sessions/surfaces/editor"
)

// ACPDeps is what the acp command takes from the binary.
type ACPDeps struct {
	// Describe says where a session began ("Slack T1/C1/…"), for the
	// editor's session list.
	Describe func(core.Origin) string
	Version  string
}

const acpSummary = "speak the Agent Client Protocol on stdin/stdout, for an editor to open, follow and continue sessions"

// ACP is the acp command: switchboard as an ACP agent that an editor
// launches, driving a gateway over its API (docs/editors.md).
func ACP(d Defaults, deps ACPDeps) command.Command {
	run := func(ctx context.Context, env cliIO, args []string) error {
		return runACP(ctx, newACPCommand(env), deps, args)
	}
	probe := newACPCommand(cliIO{getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, defaults: d})
	_ = runACP(context.Background(), probe, deps, []string{"--help"})
	return command.Command{Name: "acp", Usage: "acp [flags]", Summary: "serve an editor over the Agent Client Protocol (see acp --help)",
		Run: runner(d, run), Flags: command.Flags(probe.fs)}
}

func newACPCommand(env cliIO) *subcommand {
	c := newServerCommand(env, "acp", "[flags]")
	c.summary = acpSummary + "\n(stdout carries protocol only; logs go to stderr or --log)"
	return c
}

func runACP(ctx context.Context, c *subcommand, deps ACPDeps, args []string) error {
	agent := c.fs.String("agent", "default", "the `NAME` or id of the agent a new session (session/new) runs")
	logFile := c.fs.String("log", "", "append logs to `FILE` instead of stderr")
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	var logw io.Writer = c.env.stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("acp: log file: %w", err)
		}
		defer f.Close()
		logw = f
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	token, _ := c.resolveToken() // c.client resolved it already
	o := editor.Options{
		Gateway: cl, URL: firstOf(c.url, c.env.getenv("SWITCHBOARD_URL"), c.env.defaults.URL),
		Agent: *agent, Describe: deps.Describe, Version: deps.Version,
		TokenSession: func() (string, bool) { return client.TokenSession(token) },
		Log:          slog.New(slog.NewTextHandler(logw, nil)).With("component", "acp"),
	}
	return editor.Serve(ctx, o, c.env.stdin, c.env.stdout)
}
