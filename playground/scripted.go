package playground

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// ScriptedModel is the model name the gateway runs the demo model under,
// so that the console, the session page and the API name it too.
const ScriptedModel = "openai/scripted-demo"

// demoCalls are the tools the demo model calls, the first one a session
// offers: each shows on its platform (a reaction in Slack, a read of the
// pull request on GitHub or of the merge request on GitLab, an action activity in Linear).
var demoCalls = []modelserver.ToolCall{
	{Name: "mcp_slack_add_reaction", Input: map[string]any{"name": "eyes"}},
	{Name: "mcp_github_get_issue", Input: map[string]any{}},
	{Name: "mcp_gitlab_get_merge_request", Input: map[string]any{}},
	{Name: "mcp_linear_list_teams", Input: map[string]any{}},
}

// demoAnswer answers as the demo model: to a person's message, one call of
// a platform tool; to the tool's result, a reply that says it is
// scripted, quotes the message and what the tool answered. The same
// conversation always gets the same answer.
func demoAnswer(req modelserver.Request) modelserver.Step {
	if len(req.Messages) == 0 {
		return modelserver.Step{Text: scriptedReply("", "", "")}
	}
	last := req.Messages[len(req.Messages)-1]
	said := lastSaid(req.Messages)
	if result, ok := toolResult(last); ok {
		return modelserver.Step{Text: scriptedReply(said, result.tool(req.Messages), result.Output)}
	}
	for _, call := range demoCalls {
		if slices.Contains(req.Tools, call.Name) {
			return modelserver.Step{ToolCalls: []modelserver.ToolCall{call}}
		}
	}
	return modelserver.Step{Text: scriptedReply(said, "", "")}
}

// resultBlock is a tool result the demo model reads.
type resultBlock struct{ core.Block }

// tool is the name of the call the result answers.
func (r resultBlock) tool(history []core.Message) string {
	for _, m := range slices.Backward(history) {
		for _, b := range m.Content {
			if b.Type == core.BlockToolUse && b.ToolUseID == r.ToolUseID {
				return b.Name
			}
		}
	}
	return "a tool"
}

func toolResult(m core.Message) (resultBlock, bool) {
	if m.Role != core.RoleUser {
		return resultBlock{}, false
	}
	for _, b := range m.Content {
		if b.Type == core.BlockToolResult {
			return resultBlock{b}, true
		}
	}
	return resultBlock{}, false
}

// lastSaid is the text of the latest message a person sent, without the
// markup of the context the gateway wraps around some (Linear's issue).
func lastSaid(history []core.Message) string {
	for _, m := range slices.Backward(history) {
		if m.Role != core.RoleUser {
			continue
		}
		for _, b := range slices.Backward(m.Content) {
			if b.Type != core.BlockText {
				continue
			}
			// The gateway's context comes first, the person's words last.
			paragraphs := strings.Split(b.Text, "\n\n")
			text := strings.TrimSpace(markup.ReplaceAllString(paragraphs[len(paragraphs)-1], " "))
			// A chat message names its author first ("<@U0YOU>: …"); the
			// reply quotes what the person wrote, not who they are.
			if text = strings.TrimSpace(author.ReplaceAllString(text, "")); text != "" {
				return text
			}
		}
	}
	return ""
}

var (
	markup = regexp.MustCompile(`</?[a-z][^>]*>`)
	// author is a chat message's leading author: a user's mention (or
	// name), an edit's note, a colon.
	author = regexp.MustCompile(`^(?:<@[A-Z0-9]+>|@[\w.-]+)(?: \([^)]*\))?: `)
)

// scriptedReply is the demo model's answer.
func scriptedReply(said, tool, output string) string {
	var b strings.Builder
	b.WriteString("**Scripted demo model**: this answer is canned, no model is configured.\n\n")
	if said != "" {
		fmt.Fprintf(&b, "You wrote: “%s”\n", oneLine(said, 200))
	}
	if tool != "" {
		fmt.Fprintf(&b, "I called `%s`, which answered: %s\n", tool, oneLine(output, 160))
	}
	b.WriteString("\nFor real answers, set SWITCHBOARD_MODEL and its key (ANTHROPIC_API_KEY, OPENAI_API_KEY, or OPENAI_BASE_URL for Ollama or vLLM) and start `switchboard dev` again.")
	return b.String()
}

// oneLine is s on one line, cut at n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	if s == "" {
		return "(nothing)"
	}
	return s
}
