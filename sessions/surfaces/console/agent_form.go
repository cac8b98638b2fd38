package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// agentFields are the agent body's fields an API refusal may name; each
// has its place in the form.
var agentFields = []string{"name", "model", "system", "description", "environment", "limits", "tools", "mcp_servers", "skills", "memory_stores", "metadata"}

// agentForm is the agent form as typed: what the page shows again when
// the API refuses it.
type agentForm struct {
	Name, Model, Description, System, Environment string
	// Limits as typed; empty means the gateway's default.
	MaxSteps, TurnSeconds, MaxTokens string
	// The lists as JSON arrays, edited by hand and checked by the API.
	Tools, MCPServers, Skills, MemoryStores string
	// Metadata as NAME=value lines.
	Metadata string
	// Version is the version the form was opened at (edit only): the
	// API refuses the save when another was saved since.
	Version int
}

// agentFormOf is the form filled from a stored version.
func agentFormOf(a *core.Agent) agentForm {
	f := agentForm{
		Name: a.Name, Model: a.Model, Description: a.Description, System: a.System, Environment: a.Environment,
		Tools: jsonList(a.Tools), MCPServers: jsonList(a.MCPServers), Skills: jsonList(a.Skills), MemoryStores: jsonList(a.MemoryStores),
		Metadata: keyValueText(a.Metadata), Version: a.Version,
	}
	f.MaxSteps, f.TurnSeconds, f.MaxTokens = numberText(int64(a.Limits.MaxSteps)), numberText(int64(a.Limits.TurnSeconds)), numberText(a.Limits.MaxTokens)
	return f
}

// readAgentForm is the form as posted.
func readAgentForm(v url.Values) agentForm {
	f := agentForm{
		Name: strings.TrimSpace(v.Get("name")), Model: strings.TrimSpace(v.Get("model")), Description: v.Get("description"),
		System: v.Get("system"), Environment: strings.TrimSpace(v.Get("environment")),
		MaxSteps: v.Get("max_steps"), TurnSeconds: v.Get("turn_seconds"), MaxTokens: v.Get("max_tokens"),
		Tools: v.Get("tools"), MCPServers: v.Get("mcp_servers"), Skills: v.Get("skills"), MemoryStores: v.Get("memory_stores"),
		Metadata: v.Get("metadata"),
	}
	f.Version, _ = strconv.Atoi(v.Get("version"))
	return f
}

// params is the API body the form stands for, or what the console could
// not read (a number that is not one, JSON that does not parse) under the
// field it is in. Every field is sent: an emptied list or map clears the
// previous version's. create leaves out what is empty.
func (f agentForm) params(create bool) (client.AgentParams, formErrors) {
	fe := formErrors{Fields: map[string]string{}}
	p := client.AgentParams{Name: &f.Name, Model: &f.Model, System: &f.System, Description: &f.Description, Environment: &f.Environment}
	var l core.Limits
	l.MaxSteps = int(readNumber(fe, "max_steps", f.MaxSteps))
	l.TurnSeconds = int(readNumber(fe, "turn_seconds", f.TurnSeconds))
	l.MaxTokens = readNumber(fe, "max_tokens", f.MaxTokens)
	p.Limits = &l
	p.Tools = readJSONList[core.ToolSpec](fe, "tools", f.Tools)
	p.MCPServers = readJSONList[core.MCPServerSpec](fe, "mcp_servers", f.MCPServers)
	p.Skills = readJSONList[core.SkillRef](fe, "skills", f.Skills)
	p.MemoryStores = readJSONList[core.MemoryStoreRef](fe, "memory_stores", f.MemoryStores)
	md, err := readKeyValues(f.Metadata)
	if err != nil {
		fe.Fields["metadata"] = err.Error()
	}
	p.Metadata = &md
	if create {
		if len(md) == 0 {
			p.Metadata = nil
		}
		if f.Description == "" {
			p.Description = nil
		}
		if f.Environment == "" {
			p.Environment = nil
		}
		if l == (core.Limits{}) {
			p.Limits = nil
		}
	} else {
		p.Version = &f.Version
	}
	if len(fe.Fields) == 0 {
		fe.Fields = nil
	}
	return p, fe
}

// keepUnshownLimits copies onto l, the limits the form sends, those it
// does not show (the session budgets, max_turns) from opened, the limits
// of the version it was opened at: the API replaces limits whole, so an
// edit would otherwise drop them.
func keepUnshownLimits(l *core.Limits, opened core.Limits) {
	l.MaxSessionTokens, l.MaxSessionCostUSD, l.MaxTurns = opened.MaxSessionTokens, opened.MaxSessionCostUSD, opened.MaxTurns
}

// readNumber reads a whole number typed in field; empty is 0.
func readNumber(fe formErrors, field, s string) int64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fe.Fields[field] = fmt.Sprintf("%q is not a whole number; leave it empty for the default", s)
	}
	return n
}

// numberText is a number as the form shows it: empty for 0, the default.
func numberText(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// readJSONList reads a JSON array typed in field; empty is an empty list.
// Unknown keys are refused here, since the typed body would drop them
// without a word.
func readJSONList[T any](fe formErrors, field, s string) *[]T {
	list := []T{}
	if strings.TrimSpace(s) == "" {
		return &list
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	err := dec.Decode(&list)
	if err == nil && dec.More() {
		err = fmt.Errorf("text after the closing ]")
	}
	if err != nil {
		fe.Fields[field] = fmt.Sprintf("%s: want a JSON array, as in the API's docs: %v", field, err)
	}
	return &list
}

// jsonList is a list as the form shows it: indented JSON, empty when
// there is nothing.
func jsonList[T any](list []T) string {
	if len(list) == 0 {
		return ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(list) // values read from JSON encode again
	return strings.TrimSpace(buf.String())
}

// readKeyValues reads NAME=value lines (blank lines skipped).
func readKeyValues(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: want NAME=value", i+1)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d: %s is given twice", i+1, k)
		}
		out[k] = v
	}
	return out, nil
}

// keyValueText is a map as NAME=value lines, sorted.
func keyValueText(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%s\n", k, m[k])
	}
	return b.String()
}
