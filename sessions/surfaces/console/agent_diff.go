package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// diffPage compares two versions of an agent: its settings as indented
// JSON, and its system prompt as text, line by line.
type diffPage struct {
	Root  string
	Agent *core.Agent // the latest version
	// From and To are the versions compared; From 0 is nothing (the
	// agent's first version against an empty one).
	From, To int
	Versions []int // newest first, for the form that picks two
	Settings []diffLine
	System   []diffLine
	// Same says the two versions hold the same settings and prompt.
	Same bool
}

func (h *Handler) agentDiff(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	ctx := r.Context()
	latest, err := h.api.GetAgent(ctx, r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the agent", err)
		return
	}
	p := diffPage{Root: relative(r, ""), Agent: latest, To: latest.Version}
	q := r.URL.Query()
	bad := func(msg string) {
		h.message(w, r, s, http.StatusBadRequest, "Cannot compare these versions", msg)
	}
	if v := q.Get("to"); v != "" {
		if p.To, err = strconv.Atoi(v); err != nil || p.To < 1 || p.To > latest.Version {
			bad(fmt.Sprintf("to=%q: want a version from 1 to %d.", v, latest.Version))
			return
		}
	}
	p.From = p.To - 1
	if v := q.Get("from"); v != "" {
		if p.From, err = strconv.Atoi(v); err != nil || p.From < 0 || p.From > latest.Version {
			bad(fmt.Sprintf("from=%q: want a version from 0 (none) to %d.", v, latest.Version))
			return
		}
	}
	older, newer := &core.Agent{}, latest
	if p.From > 0 {
		if older, err = h.api.GetAgentVersion(ctx, latest.ID, p.From); err != nil {
			h.apiFailed(w, r, s, "read the agent's version", err)
			return
		}
	}
	if p.To != latest.Version {
		if newer, err = h.api.GetAgentVersion(ctx, latest.ID, p.To); err != nil {
			h.apiFailed(w, r, s, "read the agent's version", err)
			return
		}
	}
	for v := latest.Version; v >= 1; v-- {
		p.Versions = append(p.Versions, v)
	}
	p.Settings = lineDiff(settingsLines(older, p.From > 0), settingsLines(newer, true))
	p.System = lineDiff(textLines(older.System), textLines(newer.System))
	p.Same = unchanged(p.Settings) && unchanged(p.System)
	title := fmt.Sprintf("Agent %s: version %d against %d", latest.Name, p.To, p.From)
	h.render(w, r, http.StatusOK, "agent_diff", layout{Title: title, Nav: "agents", CSRF: s.CSRF, Page: p})
}

// settingsLines is a version's settings as indented JSON with sorted
// keys, less what differs between any two versions (the version number
// and times) and the system prompt, compared as text on its own. A
// version that is not there has no lines.
func settingsLines(a *core.Agent, exists bool) []string {
	if !exists {
		return nil
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return []string{err.Error()}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return []string{err.Error()}
	}
	for _, k := range []string{"version", "created_at", "updated_at", "system"} {
		delete(m, k)
	}
	// Maps marshal with sorted keys: the same settings give the same text.
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return []string{err.Error()}
	}
	return strings.Split(string(out), "\n")
}

func textLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLine is one line of a diff: Op is "add", "del" or "same".
type diffLine struct{ Op, Text string }

func unchanged(lines []diffLine) bool {
	for _, l := range lines {
		if l.Op != "same" {
			return false
		}
	}
	return true
}

// maxDiffCells bounds the table of the longest common subsequence; past
// it the changed middle shows as removed, then added.
const maxDiffCells = 4 << 20

// lineDiff is the shortest edit from a to b by lines: the lines of a
// longest common subsequence kept, the others removed from a or added
// from b. The common head and tail are kept before the table is built.
func lineDiff(a, b []string) []diffLine {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var out []diffLine
	for _, l := range a[:head] {
		out = append(out, diffLine{"same", l})
	}
	am, bm := a[head:len(a)-tail], b[head:len(b)-tail]
	n, m := len(am), len(bm)
	if n*m > maxDiffCells {
		for _, l := range am {
			out = append(out, diffLine{"del", l})
		}
		for _, l := range bm {
			out = append(out, diffLine{"add", l})
		}
	} else {
		// lcs[i*(m+1)+j] is the length of a longest common subsequence of
		// am[i:] and bm[j:].
		lcs := make([]int, (n+1)*(m+1))
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
				} else {
					lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n && j < m {
			switch {
			case am[i] == bm[j]:
				out = append(out, diffLine{"same", am[i]})
				i++
				j++
			case lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]:
				out = append(out, diffLine{"del", am[i]})
				i++
			default:
				out = append(out, diffLine{"add", bm[j]})
				j++
			}
		}
		for ; i < n; i++ {
			out = append(out, diffLine{"del", am[i]})
		}
		for ; j < m; j++ {
			out = append(out, diffLine{"add", bm[j]})
		}
	}
	for _, l := range a[len(a)-tail:] {
		out = append(out, diffLine{"same", l})
	}
	return out
}
