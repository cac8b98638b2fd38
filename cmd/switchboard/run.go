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
  switchboard version            print the version
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
