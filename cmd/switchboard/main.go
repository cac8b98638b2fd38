// Command switchboard is the gateway (serve) and its command-line client.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}
