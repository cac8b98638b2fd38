package output

import (
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// maxRelayedQuote bounds what a note quotes of a message sent from
// elsewhere.
const maxRelayedQuote = 500

// relayed is what a platform renders of ev: a person's user.message sent
// from their editor (an attach token's) becomes a note that tells the
// thread who continued the session there and what they asked, since the
// platform has no message of theirs to acknowledge; the turn's answer
// follows in the thread as usual. Every other event is itself.
func relayed(ev core.Event) core.Event {
	if ev.Type != core.TypeUserMessage {
		return ev
	}
	var b core.MessageBody
	if ev.Decode(&b) != nil || b.Via != core.ViaEditor || b.By == "" {
		return ev
	}
	text := unmention(b.By) + " continued this session from their editor:\n\n" + quote(unmention(clipText(b.Text, maxRelayedQuote)))
	note := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: text, Kind: core.MessageKindNote})
	note.ID, note.SessionID, note.Seq, note.TurnID, note.CreatedAt = ev.ID, ev.SessionID, ev.Seq, ev.TurnID, ev.CreatedAt
	return note
}

// A word joiner (U+2060, invisible) after the sigil breaks a mention.
var (
	reRefPing   = regexp.MustCompile(`<([@!])`)           // chat references: <@U…>, <!channel>, <!here>, <!subteam^…>
	reAtMention = regexp.MustCompile(`@([\p{L}\p{N}_-])`) // @person, @org/team
)

// unmention breaks the mentions in text a person wrote elsewhere, which
// the bot would otherwise make on their behalf: chat references to
// people and groups, and @names. They read the same.
func unmention(text string) string {
	text = reRefPing.ReplaceAllString(text, "<\u2060$1")
	return reAtMention.ReplaceAllString(text, "@\u2060$1")
}

// quote makes text a Markdown block quote.
func quote(text string) string {
	return "> " + strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n> ")
}

// clipText cuts text to at most n bytes, on a character boundary, marking
// the cut.
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xc0 == 0x80 {
		cut--
	}
	return text[:cut] + "…"
}
