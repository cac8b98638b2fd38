package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `switchboard — a self-hosted gateway for AI agents in Slack, GitHub and Linear

usage:
  switchboard serve [flags]      run the gateway (see serve -h)
  switchboard agent create|list|get|update [flags]
                                 manage agents over the API (see agent -h)
  switchboard session create|list|send|status|events|wake|interrupt|archive [flags]
                                 drive sessions over the API (see session -h)
  switchboard version            print the version

The agent and session commands reach the server at --url, $SWITCHBOARD_URL or
http://127.0.0.1:8080 with --token, $SWITCHBOARD_TOKEN or the token file
<data dir>/admin-token; --json prints JSON.
`

// run dispatches a command line and returns the exit code.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer, stderr *os.File) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], getenv, stdout, stderr)
	case "agent", "session":
		return cli(args, getenv, stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "switchboard", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "switchboard:", err)
		return 1
	}
	return 0
}
