// Command switchboard is the gateway (serve) and its command-line client.
package main

import (
	"context"
	"os"

	"github.com/switchboardhq/switchboard/core/command"
)

func main() {
	env := command.Env{Getenv: os.Getenv, Environ: os.Environ, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	os.Exit(run(context.Background(), os.Args[1:], env))
}
