// Command benchtable reads `go test -bench` output and prints one table of
// figure, baseline and ratio: every metric a benchmark reports beside a
// "baseline-" metric of the same unit, measured in the same run, is a row;
// with -count above one, each column is the median of the runs.
// scripts/bench pipes the performance benchmarks through it.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	rows, err := read(in)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("no benchmark reported a metric beside its baseline (baseline-<unit>)")
	}
	write(out, rows)
	return nil
}
