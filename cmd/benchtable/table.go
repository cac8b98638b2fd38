package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// row is one figure beside its baseline: the medians of the runs.
type row struct {
	bench, unit      string
	figure, baseline float64
	runs             int
}

// ratio is the figure over its baseline.
func (r row) ratio() float64 {
	if r.baseline == 0 {
		return 0
	}
	return r.figure / r.baseline
}

// benchLine is a result line: name, iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// read collects, per benchmark and unit, the values of every run, and
// pairs each unit with its baseline.
func read(in io.Reader) ([]row, error) {
	values := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	pkg := ""
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "pkg: "); ok {
			// Benchmarks of two packages may share a name: the package's
			// last element tells them apart.
			pkg = p[strings.LastIndex(p, "/")+1:] + "."
			continue
		}
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, fields := pkg+strings.TrimPrefix(m[1], "Benchmark"), strings.Fields(m[2])
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("%s: metrics %q are not value-unit pairs", name, m[2])
		}
		if values[name] == nil {
			values[name] = map[string][]float64{}
			order = append(order, name)
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", name, fields[i], fields[i+1], err)
			}
			values[name][fields[i+1]] = append(values[name][fields[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var rows []row
	for _, name := range order {
		units := values[name]
		var names []string
		for u := range units {
			if _, ok := units["baseline-"+u]; ok {
				names = append(names, u)
			}
		}
		slices.Sort(names)
		for _, u := range names {
			rows = append(rows, row{bench: name, unit: u,
				figure: median(units[u]), baseline: median(units["baseline-"+u]), runs: len(units[u])})
		}
	}
	return rows, nil
}

// median of vs (the mean of the middle two for an even count).
func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func write(out io.Writer, rows []row) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "benchmark\tunit\tfigure\tbaseline\tratio\truns\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.2f\t%d\t\n", r.bench, r.unit, num(r.figure), num(r.baseline), r.ratio(), r.runs)
	}
	w.Flush()
}

// num writes v with three significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
