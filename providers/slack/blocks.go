package slack

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
)

// outMsg is a message the sink posts: its mrkdwn sections and optional
// extra blocks (buttons) after them.
type outMsg struct {
	texts []string
	extra []slackapi.Block
}

func (m outMsg) options() []slackapi.MsgOption {
	blocks := append(sections(m.texts...), m.extra...)
	return []slackapi.MsgOption{slackapi.MsgOptionText(fallback(m.texts), false), slackapi.MsgOptionBlocks(blocks...)}
}

func button(actionID, label, value, style string) *slackapi.ButtonBlockElement {
	b := slackapi.NewButtonBlockElement(actionID, value, slackapi.NewTextBlockObject(slackapi.PlainTextType, clip(label, 75), false, false))
	if style != "" {
		b.Style = slackapi.Style(style)
	}
	return b
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// statusMsg is the status message of a turn, edited in place; a running
// turn's carries the Stop button.
func statusMsg(text, sessionID string, running bool) outMsg {
	m := outMsg{texts: []string{text}}
	if running {
		m.extra = []slackapi.Block{slackapi.NewActionBlock("sb_status",
			button(actionStop, "Stop", actionValue{Session: sessionID}.String(), "danger"))}
	}
	return m
}

var reOption = regexp.MustCompile(`^\s*(?:[-*+•]|\d{1,2}[.)]|[A-Za-z][.)])\s+(.+?)\s*$`)

var yesNoStarts = []string{"should", "shall", "can", "could", "do", "does", "did", "is", "are", "was", "were", "will", "would", "may", "have", "has", "ok", "okay", "proceed"}

// askOptions are the buttons of a question: the options it lists (two to
// five short list items), else Yes and No when it reads as a yes/no
// question, else none (the answer is a reply in the thread).
func askOptions(q string) []string {
	var opts []string
	for _, line := range strings.Split(q, "\n") {
		if m := reOption.FindStringSubmatch(line); m != nil {
			opts = append(opts, strings.Trim(m[1], "*_`~ "))
		}
	}
	short := true
	for _, o := range opts {
		short = short && o != "" && utf8.RuneCountInString(o) <= 75
	}
	if len(opts) >= 2 && len(opts) <= 5 && short {
		return opts
	}
	t := strings.TrimSpace(q)
	first, _, _ := strings.Cut(strings.ToLower(t), " ")
	for _, w := range yesNoStarts {
		if first == w && strings.HasSuffix(t, "?") && !strings.Contains(t, "\n") {
			return []string{"Yes", "No"}
		}
	}
	return nil
}

// askBlocks are a question's buttons and the hint to reply instead.
func askBlocks(sessionID string, opts []string) []slackapi.Block {
	var out []slackapi.Block
	if len(opts) > 0 {
		var els []slackapi.BlockElement
		for i, o := range opts {
			els = append(els, button(actionAnswer+strconv.Itoa(i), o, actionValue{Session: sessionID, Answer: clip(o, 1000)}.String(), ""))
		}
		out = append(out, slackapi.NewActionBlock("sb_answer", els...))
	}
	out = append(out, slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, "Reply in this thread to answer.", false, false)))
	return out
}

// confirmMsg asks a person to allow or deny an ask-first tool call.
func confirmMsg(sessionID, toolUseID string, t toolRef) outMsg {
	text := "*Allow this?* The agent wants to run `" + escapeText(t.Name) + "`"
	if t.Input != "" && t.Input != "{}" {
		text += " with:\n```" + escapeText(t.Input) + "```"
	}
	v := actionValue{Session: sessionID, ToolUse: toolUseID}.String()
	return outMsg{texts: []string{text}, extra: []slackapi.Block{slackapi.NewActionBlock("sb_confirm",
		button(actionAllow, "Allow", v, "primary"), button(actionDeny, "Deny", v, "danger"))}}
}

// retryBlocks are the Retry button of a turn that failed or was cut
// short (a user.retry of turn).
func retryBlocks(sessionID, turn string) []slackapi.Block {
	return []slackapi.Block{slackapi.NewActionBlock("sb_retry",
		button(actionRetry, "Retry", actionValue{Session: sessionID, Turn: turn}.String(), "primary"))}
}
