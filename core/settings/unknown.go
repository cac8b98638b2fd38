package settings

import (
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core/command"
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
		out = append(out, Unknown{Name: name, Closest: command.Closest(name, known)})
	}
	return out
}

func hasPrefix(name string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
