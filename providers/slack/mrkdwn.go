package slack

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
)

// Slack's limits on what one message may carry.
const (
	sectionLimit = 3000   // characters of a section block's text
	messageLimit = 40000  // characters of a message's text
	blocksLimit  = 50     // blocks of a message
	perMessage   = 39_000 // what we put in one message, under its limit
)

var (
	reHeading   = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	reBullet    = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	reRule      = regexp.MustCompile(`^\s{0,3}([-*_])(\s*[-*_]){2,}\s*$`)
	reFence     = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	reImage     = regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reLink      = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reBold      = regexp.MustCompile(`\*\*(\S(?:.*?\S)?)\*\*|__(\S(?:.*?\S)?)__`)
	reItalic    = regexp.MustCompile(`(^|[^\w*])\*(\S(?:[^*]*?\S)?)\*`)
	reStrike    = regexp.MustCompile(`~~(\S(?:.*?\S)?)~~`)
	reCode      = regexp.MustCompile("`[^`]+`")
	reSlackRefs = regexp.MustCompile(`<(?:[@#!][^<>\s]+|(?:https?|mailto):[^<>\s]+)>`)
)

// toMrkdwn converts the model's Markdown to Slack's mrkdwn: headings
// become bold lines, **bold** *bold*, *italic* _italic_, ~~strike~~
// ~strike~, [text](url) <url|text>, bullets •; code spans and fenced
// blocks are kept (without a language, which Slack does not show), tables
// are fenced so their columns line up, and &, < and > are escaped except
// in Slack's own references (<@U…>, <#C…>, <!here>, <https://…>).
func toMrkdwn(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	fenced, table := false, false
	for _, line := range lines {
		if reFence.MatchString(line) {
			if table {
				out, table = append(out, "```"), false
			}
			fenced = !fenced
			out = append(out, "```")
			continue
		}
		if fenced {
			out = append(out, escapeText(line))
			continue
		}
		isRow := strings.HasPrefix(strings.TrimSpace(line), "|")
		switch {
		case isRow && !table:
			out, table = append(out, "```"), true
		case !isRow && table:
			out, table = append(out, "```"), false
		}
		if table {
			out = append(out, escapeText(line))
			continue
		}
		out = append(out, convertLine(line))
	}
	if fenced || table {
		out = append(out, "```")
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func convertLine(line string) string {
	if reRule.MatchString(line) {
		return "──────────"
	}
	if m := reHeading.FindStringSubmatch(line); m != nil {
		if m[1] == "" {
			return ""
		}
		h := inline(m[1])
		if len(h) > 1 && strings.HasPrefix(h, "*") && strings.HasSuffix(h, "*") {
			return h // already bold
		}
		return "*" + h + "*"
	}
	if m := reBullet.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + inline(m[2])
	}
	quote := ""
	if rest, ok := strings.CutPrefix(strings.TrimLeft(line, " "), ">"); ok {
		quote, line = ">", rest
	}
	return quote + inline(line)
}

// inline converts a line's spans; code spans, links and Slack references
// are set aside first so nothing inside them is touched.
func inline(s string) string {
	var kept []string
	keep := func(v string) string {
		kept = append(kept, v)
		return fmt.Sprintf("\x00%d\x00", len(kept)-1)
	}
	s = reCode.ReplaceAllStringFunc(s, func(m string) string { return keep("`" + escapeText(m[1:len(m)-1]) + "`") })
	s = reSlackRefs.ReplaceAllStringFunc(s, keep)
	s = reImage.ReplaceAllStringFunc(s, func(m string) string {
		sm := reImage.FindStringSubmatch(m)
		return keep("<" + sm[2] + "|" + linkText(nonEmpty(sm[1], sm[2])) + ">")
	})
	s = reLink.ReplaceAllStringFunc(s, func(m string) string {
		sm := reLink.FindStringSubmatch(m)
		return keep("<" + sm[2] + "|" + linkText(sm[1]) + ">")
	})
	s = escapeText(s)
	s = reBold.ReplaceAllStringFunc(s, func(m string) string {
		sm := reBold.FindStringSubmatch(m)
		return "\x01" + sm[1] + sm[2] + "\x01"
	})
	s = reItalic.ReplaceAllString(s, "${1}_${2}_")
	s = strings.ReplaceAll(s, "\x01", "*")
	s = reStrike.ReplaceAllString(s, "~${1}~")
	for i := len(kept) - 1; i >= 0; i-- {
		s = strings.ReplaceAll(s, fmt.Sprintf("\x00%d\x00", i), kept[i])
	}
	return s
}

// linkText is a link's label: escaped, without the | that would end it.
func linkText(s string) string {
	return strings.ReplaceAll(escapeText(s), "|", "¦")
}

// escapeText escapes the three characters Slack reserves.
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// split cuts mrkdwn into chunks of at most limit characters, at paragraph
// boundaries where it can, else at line ends, else inside a line; a code
// block cut in two is closed and reopened so both halves render.
func split(s string, limit int) []string {
	if utf8.RuneCountInString(s) <= limit {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var chunks []string
	var cur strings.Builder
	curLen, fenced := 0, false
	flush := func() {
		text := strings.TrimRight(cur.String(), "\n")
		if fenced {
			text += "\n```"
		}
		if strings.TrimSpace(text) != "" && text != "```\n```" {
			chunks = append(chunks, text)
		}
		cur.Reset()
		curLen = 0
		if fenced {
			cur.WriteString("```\n")
			curLen = 4
		}
	}
	for _, para := range paragraphs(s) {
		for _, line := range strings.SplitAfter(para, "\n") {
			n := utf8.RuneCountInString(line)
			// Room for the fence a cut may add.
			if curLen+n > limit-4 && curLen > 0 {
				flush()
			}
			for n > limit-8 { // one line longer than a chunk
				head := string([]rune(line)[:limit-8])
				cur.WriteString(head)
				curLen += utf8.RuneCountInString(head)
				flush()
				line = string([]rune(line)[limit-8:])
				n = utf8.RuneCountInString(line)
			}
			cur.WriteString(line)
			curLen += n
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
		}
	}
	fenced = false
	flush()
	return chunks
}

// paragraphs splits s after each blank line, keeping the separators, so a
// chunk boundary falls between paragraphs when it can.
func paragraphs(s string) []string {
	parts := strings.SplitAfter(s, "\n\n")
	var out []string
	var acc strings.Builder
	for _, p := range parts {
		acc.WriteString(p)
		out = append(out, acc.String())
		acc.Reset()
	}
	return out
}

// reply is one message to post: its section texts.
type reply []string

// replies lays mrkdwn out as messages: sections of at most sectionLimit
// characters, each message within the message and block limits.
func replies(mrkdwn string) []reply {
	var out []reply
	var cur reply
	size := 0
	for _, c := range split(mrkdwn, sectionLimit) {
		n := utf8.RuneCountInString(c)
		if len(cur) > 0 && (size+n > perMessage || len(cur) >= blocksLimit-2) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, c)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// sections are section blocks of mrkdwn texts (split first if needed).
func sections(texts ...string) []slackapi.Block {
	var out []slackapi.Block
	for _, t := range texts {
		for _, c := range split(t, sectionLimit) {
			out = append(out, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, c, false, false), nil, nil))
		}
	}
	return out
}

// fallback is a message's plain text for notifications, within the
// message limit.
func fallback(texts []string) string {
	s := strings.Join(texts, "\n\n")
	if utf8.RuneCountInString(s) > messageLimit-100 {
		s = string([]rune(s)[:messageLimit-100]) + "…"
	}
	return s
}
