package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// FirstText is what a store keeps of the first user message among events
// (queued inputs, or a log in seq order): the text of the first
// user.message not written by the system (context and instructions the
// providers log are not what a user asked). ok is false when there is
// none; a message without text keeps "", so a later one never takes its
// place. U+0000 becomes U+FFFD (SearchText): the message itself is kept
// as sent, this copy only answers the text filter.
func FirstText(events []core.Event) (text string, ok bool) {
	for _, e := range events {
		if e.Type != core.TypeUserMessage || e.Actor == core.ActorSystem {
			continue
		}
		var b core.MessageBody
		_ = json.Unmarshal(e.Body, &b) // a body without text keeps ""
		return CapText(SearchText(b.Text)), true
	}
	return "", false
}

// SearchText is free text as a store copies it for a filter to read:
// U+0000, which PostgreSQL's text cannot hold, replaced by U+FFFD in both
// stores, so a filter matches alike in either (a filter holding U+0000 is
// refused: CheckFilter).
func SearchText(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// CheckFilter refuses, as ErrInvalid naming the filter, a filter value a
// store could not have kept (core.CheckText): no session could match it.
func CheckFilter(f core.SessionFilter) error {
	for _, v := range []struct{ name, v string }{
		{"status", string(f.Status)}, {"agent", f.AgentID}, {"origin_key", f.OriginKey},
		{"provider", f.Provider}, {"tenant", f.Tenant}, {"text", f.Text}, {"after", f.After},
	} {
		if err := core.CheckText("filter "+v.name, v.v); err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
	}
	return nil
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
