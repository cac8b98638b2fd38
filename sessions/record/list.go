package record

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// FirstText is what a store keeps of the first user message among events
// (queued inputs, or a log in seq order): the text of the first
// user.message not written by the system (context and instructions the
// providers log are not what a user asked). ok is false when there is
// none; a message without text keeps "", so a later one never takes its
// place.
func FirstText(events []core.Event) (text string, ok bool) {
	for _, e := range events {
		if e.Type != core.TypeUserMessage || e.Actor == core.ActorSystem {
			continue
		}
		var b core.MessageBody
		_ = json.Unmarshal(e.Body, &b) // a body without text keeps ""
		return CapText(b.Text), true
	}
	return "", false
}

// CapText cuts s to at most core.MaxFirstText bytes of whole characters.
func CapText(s string) string {
	if len(s) <= core.MaxFirstText {
		return s
	}
	n := core.MaxFirstText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MaxExamined is the bound of a text-filtered page's scan.
func MaxExamined(f core.SessionFilter) int {
	if f.MaxExamined <= 0 {
		return core.DefaultMaxExamined
	}
	return f.MaxExamined
}
