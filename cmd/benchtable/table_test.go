package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `goos: linux
pkg: example.com/m/runtime
BenchmarkWake/history=0-2   	 156	 7848253 ns/op	 0.5 baseline-p50-ms	 0.6 baseline-p99-ms	 5.0 p50-ms	 7.0 p99-ms
BenchmarkWake/history=0-2   	 150	 7848253 ns/op	 0.7 baseline-p50-ms	 0.8 baseline-p99-ms	 3.0 p50-ms	 9.0 p99-ms
BenchmarkWake/history=0-2   	 150	 7848253 ns/op	 0.6 baseline-p50-ms	 0.7 baseline-p99-ms	 4.0 p50-ms	 8.0 p99-ms
pkg: example.com/m/bolt
BenchmarkAppend64-2       	     135	   8227779 ns/op	      7779 events/s	 40000 baseline-events/s
pkg: example.com/m/postgres
BenchmarkAppend64-2       	     2	   8227779 ns/op	      200 events/s	 220 baseline-events/s
BenchmarkNoBaseline-2   10   100 ns/op
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"benchmark", "unit", "figure", "baseline", "ratio", "runs"},
		{"runtime.Wake/history=0", "p50-ms", "4", "0.6", "6.67", "3"},
		{"runtime.Wake/history=0", "p99-ms", "8", "0.7", "11.43", "3"},
		{"bolt.Append64", "events/s", "7.78e+03", "4e+04", "0.19", "1"},
		{"postgres.Append64", "events/s", "200", "220", "0.91", "1"},
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("row %d = %q, want %q", i, got, w)
		}
	}
}

func TestTableRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"no baselines": "BenchmarkA-2  10  100 ns/op\n",
		"odd metrics":  "BenchmarkA-2  10  100 ns/op 5\n",
		"a bad value":  "BenchmarkA-2  10  x ns/op 1 baseline-ns/op\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(strings.NewReader(in), &strings.Builder{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
