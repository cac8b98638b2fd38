package settings

import (
	"slices"
	"strings"
)

// Unknown is a variable of the environment that looks like a setting
// and is none, with the known name closest to it.
type Unknown struct {
	Name, Closest string
}

// UnknownVariables lists the variables of environ (KEY=value) whose
// names start with one of prefixes and are neither an option's nor one
// of also, each with the known name nearest to it in edits, in the order
// of environ. Names under ignore's prefixes are left alone.
func UnknownVariables(environ []string, prefixes []string, opts []Option, also, ignore []string) []Unknown {
	known := slices.Clone(also)
	for _, o := range opts {
		known = append(known, o.Env)
	}
	var out []Unknown
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if seen[name] || slices.Contains(known, name) || !hasPrefix(name, prefixes) || hasPrefix(name, ignore) {
			continue
		}
		seen[name] = true
		out = append(out, Unknown{Name: name, Closest: closest(name, known)})
	}
	return out
}

func hasPrefix(name string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// closest is the name of known fewest edits away from name.
func closest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if d := edits(name, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// edits is the Levenshtein distance between a and b.
func edits(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
