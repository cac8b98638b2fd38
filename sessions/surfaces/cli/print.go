package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// The CLI's human output: aligned "key: value" lines for one record,
// tables for lists, one line per event.

// keyValues prints aligned "key: value" lines, skipping empty values; a
// multi-line value continues indented under its first line.
func (c *subcommand) keyValues(kvs [][2]string) error {
	width := 0
	for _, kv := range kvs {
		width = max(width, len(kv[0]))
	}
	var b strings.Builder
	for _, kv := range kvs {
		if kv[1] == "" {
			continue
		}
		lines := strings.Split(strings.TrimRight(kv[1], "\n"), "\n")
		fmt.Fprintf(&b, "%-*s %s\n", width+1, kv[0]+":", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%*s %s\n", width+1, "", l)
		}
	}
	return c.write(b.String())
}

// table prints rows (the first is the header) in aligned columns.
func (c *subcommand) table(rows [][]string) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder do not fail
	return c.write(b.String())
}

func (c *subcommand) write(s string) error {
	if _, err := io.WriteString(c.env.stdout, s); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

func showTime(t core.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func showLimits(l core.Limits) string {
	var parts []string
	if l.MaxSteps > 0 {
		parts = append(parts, fmt.Sprintf("max_steps=%d", l.MaxSteps))
	}
	if l.TurnSeconds > 0 {
		parts = append(parts, fmt.Sprintf("turn_seconds=%d", l.TurnSeconds))
	}
	if l.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("max_tokens=%d", l.MaxTokens))
	}
	if l.MaxSessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("max_session_tokens=%d", l.MaxSessionTokens))
	}
	if l.MaxSessionCostUSD > 0 {
		parts = append(parts, "max_session_cost_usd="+strconv.FormatFloat(l.MaxSessionCostUSD, 'f', -1, 64))
	}
	if l.MaxTurns > 0 {
		parts = append(parts, fmt.Sprintf("max_turns=%d", l.MaxTurns))
	}
	if parts == nil {
		return "gateway defaults"
	}
	return strings.Join(parts, " ")
}

func showMap(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func showOrigin(o *core.Origin) string {
	if o == nil {
		return ""
	}
	out := o.Key
	if o.URL != "" {
		out += " " + o.URL
	}
	if o.Title != "" {
		out += " (" + o.Title + ")"
	}
	return out
}

// eventTypeWidth aligns event summaries: the longest type is
// user.custom_tool_result.
const eventTypeWidth = 23

// maxSummary bounds the tool inputs and outputs shown on an event line;
// messages are shown whole since they are what a person reads.
const maxSummary = 200

// formatEvent renders one event as "#seq type  summary", continuation
// lines of a message indented under the summary.
func formatEvent(e core.Event) string {
	head := fmt.Sprintf("#%d %-*s", e.Seq, eventTypeWidth, e.Type)
	s := summary(e)
	if s == "" {
		return strings.TrimRight(head, " ") + "\n"
	}
	indent := strings.Repeat(" ", len(head)+1)
	return head + " " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent) + "\n"
}

// summary is the human part of an event's body, by type.
func summary(e core.Event) string {
	var b struct {
		Text        string          `json:"text"`
		Status      string          `json:"status"`
		StopReason  string          `json:"stop_reason"`
		YieldReason string          `json:"yield_reason"`
		Usage       *core.Usage     `json:"usage"`
		ToolUseID   string          `json:"tool_use_id"`
		Name        string          `json:"name"`
		Input       json.RawMessage `json:"input"`
		Output      string          `json:"output"`
		IsError     bool            `json:"is_error"`
		Result      string          `json:"result"`
		Message     string          `json:"message"`
		Retryable   bool            `json:"retryable"`
		Summary     string          `json:"summary"`
		TurnID      string          `json:"turn_id"`
		CostUSD     *float64        `json:"cost_usd"`
	}
	if json.Unmarshal(e.Body, &b) != nil {
		return clip(string(e.Body))
	}
	switch e.Type {
	case core.TypeUserMessage, core.TypeAgentMessage:
		return b.Text
	case core.TypeStatusChanged:
		if b.StopReason != "" {
			return fmt.Sprintf("%s (%s)", b.Status, b.StopReason)
		}
		return b.Status
	case core.TypeTurnCompleted:
		if b.Usage == nil {
			return b.YieldReason
		}
		out := fmt.Sprintf("%s  tokens in=%d out=%d", b.YieldReason, b.Usage.InputTokens, b.Usage.OutputTokens)
		if cached := b.Usage.CacheReadInputTokens + b.Usage.CacheCreationInputTokens; cached > 0 {
			out += fmt.Sprintf(" cached=%d", cached)
		}
		if b.CostUSD != nil {
			out += fmt.Sprintf("  ~$%.4f", *b.CostUSD)
		}
		return out
	case core.TypeUserRetry:
		return "retry " + b.TurnID
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		return fmt.Sprintf("%s %s %s", b.Name, b.ToolUseID, clip(string(b.Input)))
	case core.TypeAgentToolResult, core.TypeUserCustomToolResult:
		state := "ok"
		if b.IsError {
			state = "error"
		}
		return fmt.Sprintf("%s %s: %s", b.ToolUseID, state, clip(b.Output))
	case core.TypeUserToolConfirmation:
		return strings.TrimSpace(fmt.Sprintf("%s %s %s", b.ToolUseID, b.Result, b.Message))
	case core.TypeError:
		if b.Retryable {
			return b.Message + " (retryable)"
		}
		return b.Message
	case core.TypeCompacted:
		return clip(b.Summary)
	case core.TypeTurnStarted, core.TypeUserInterrupt:
		return ""
	}
	if s := string(e.Body); s != "{}" && s != "null" {
		return clip(s)
	}
	return ""
}

// clip shortens s to one line of at most maxSummary runes.
func clip(s string) string { return core.Clip(s, maxSummary) }

// dataOf is every record of a list as the API pages them, {"data": […]},
// for --json.
func dataOf[T any](all []T) web.Page[T] {
	if all == nil {
		all = []T{}
	}
	return web.Page[T]{Data: all}
}
