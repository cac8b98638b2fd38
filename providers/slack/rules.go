package slack

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack/slackevents"
	"github.com/switchboardhq/switchboard/core"
)

// act is what an event asks of the gateway.
type act int

const (
	actIgnore    act = iota
	actStart         // start or continue the thread's session
	actSteer         // continue the thread's session if it has one
	actInterrupt     // interrupt the thread's session if it has one
	actForget        // forget the installation's tokens (uninstalled, revoked)
)

func (a act) String() string {
	return [...]string{"ignore", "start", "steer", "interrupt", "forget"}[a]
}

// decision is the outcome of the trigger rules for one event.
type decision struct {
	act    act
	why    string // for the log, when ignored
	key    string // the session key: slack:<team>:<channel>:<thread ts>
	msg    msgRef // the message that triggered it
	thread string // the thread's ts
	text   string // the model's input
	said   string // what the person wrote, the bot's mention taken out
	dedupe []string
	// twin: Slack sends the message as two events, an app_mention and a
	// message (with the mention), which the dedupe keys make one input.
	twin bool
}

// msgRef names a Slack message; it rides in the inputs it produced.
type msgRef struct {
	Team    string `json:"team"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
	User    string `json:"user,omitempty"`
}

// inputBody is a user.message from Slack: the text, and where it came
// from (so the sink can react 👀 to it).
type inputBody struct {
	Text        string            `json:"text"`
	Slack       *msgRef           `json:"slack,omitempty"`
	Attachments []core.Attachment `json:"attachments,omitempty"`
}

// stopReaction interrupts the session when put on its thread's first
// message.
const stopReaction = "octagonal_sign"

// sessionKey is the origin key of a thread's session.
func sessionKey(team, channel, thread string) string {
	return "slack:" + team + ":" + channel + ":" + thread
}

// parseKey splits a session key into team, channel and thread ts.
func parseKey(key string) (team, channel, thread string, err error) {
	parts := strings.Split(key, ":")
	if len(parts) != 4 || parts[0] != "slack" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return "", "", "", fmt.Errorf("session key %q: want slack:<team>:<channel>:<thread ts>: %w", key, core.ErrInvalid)
	}
	return parts[1], parts[2], parts[3], nil
}

// identity is what the rules know of the installation an event is for.
type identity struct {
	botUserID string
	botID     string
	allowBots bool
}

// decide applies the trigger rules (docs/slack.md) to a decoded event. It is
// pure: whether a thread has a session is the caller's to look up (for
// actSteer and actInterrupt).
func decide(env *Envelope, id identity) decision {
	team := env.TeamID
	eventKey := "slack:event:" + env.EventID
	switch env.InnerType {
	case evUninstalled:
		return decision{act: actForget}
	case evTokensRevoked:
		if env.Revoked != nil && containsStr(env.Revoked.Tokens.Bot, id.botUserID) {
			return decision{act: actForget}
		}
		return decision{why: "tokens of other users revoked"}
	case evAppMention:
		m := env.Mention
		if d, bad := fromBot(m.User, m.BotID, id); bad {
			return d
		}
		d := start(env, id, m.Channel, m.TimeStamp, m.ThreadTimeStamp, m.User, m.Text, m.Edited != nil, editTS(m.Edited))
		d.twin = m.Edited == nil && d.act == actStart
		return d
	case evReactionAdded:
		r := env.Reaction
		if r.Reaction != stopReaction || r.Item.Type != "message" || r.User == id.botUserID {
			return decision{why: "not a stop reaction"}
		}
		if !validIDs(team, r.Item.Channel, r.Item.Timestamp) {
			return decision{why: "malformed reaction item"}
		}
		return decision{act: actInterrupt, key: sessionKey(team, r.Item.Channel, r.Item.Timestamp),
			msg: msgRef{Team: team, Channel: r.Item.Channel, TS: r.Item.Timestamp, User: r.User}, dedupe: []string{eventKey}}
	case evAgentStopped:
		st := env.Stopped
		if !validIDs(team, st.Channel, st.ThreadTimestamp) {
			return decision{why: "malformed agent session"}
		}
		return decision{act: actInterrupt, key: sessionKey(team, st.Channel, st.ThreadTimestamp),
			msg: msgRef{Team: team, Channel: st.Channel, TS: st.ThreadTimestamp, User: st.User}, dedupe: []string{eventKey}}
	case evMessage:
		return decideMessage(env, id)
	}
	return decision{why: "event type " + env.InnerType + " not handled"}
}

func editTS(e *slackevents.Edited) string {
	if e == nil {
		return ""
	}
	return e.TimeStamp
}

// fromBot refuses the bot's own messages always (the loop guard) and
// other bots' unless allowed.
func fromBot(user, botID string, id identity) (decision, bool) {
	switch {
	case user != "" && user == id.botUserID, botID != "" && botID == id.botID:
		return decision{why: "the bot's own message"}, true
	case botID != "" && !id.allowBots:
		return decision{why: "a bot's message (bots are not allowed)"}, true
	}
	return decision{}, false
}

// start builds the decision of a message that mentions the bot (or is a
// DM): start or continue the thread's session. An edit is its own
// delivery (it carries the edit's time), so it is not deduplicated away
// as the original message.
func start(env *Envelope, id identity, channel, ts, threadTS, user, text string, edited bool, editedTS string) decision {
	team := env.TeamID
	thread := threadTS
	if thread == "" {
		thread = ts
	}
	if !validIDs(team, channel, ts, thread) {
		return decision{why: "malformed team, channel or timestamp"}
	}
	d := decision{act: actStart, key: sessionKey(team, channel, thread), thread: thread,
		msg: msgRef{Team: team, Channel: channel, TS: ts, User: user}, text: modelText(text, user, id.botUserID, edited),
		said: withoutMention(text, id.botUserID)}
	d.dedupe = []string{"slack:event:" + env.EventID, "slack:msg:" + team + ":" + channel + ":" + ts}
	if edited {
		d.dedupe[1] = "slack:edit:" + team + ":" + channel + ":" + ts + ":" + editedTS
	}
	return d
}

func decideMessage(env *Envelope, id identity) decision {
	m := env.Message
	switch m.SubType {
	case "", "thread_broadcast", "file_share":
	case "message_changed":
		return decideEdit(env, id)
	case "message_deleted":
		// A message the agent already received stays in its log: deletion
		// is not sent on to it (see docs/slack.md).
		return decision{why: "deletions are not forwarded"}
	case "bot_message":
		if d, bad := fromBot(m.User, nonEmpty(m.BotID, "bot"), id); bad {
			return d
		}
	default:
		return decision{why: "message subtype " + m.SubType + " not handled"}
	}
	if d, bad := fromBot(m.User, m.BotID, id); bad {
		return d
	}
	author := nonEmpty(m.User, m.BotID) // an allowed bot speaks as its bot id
	if author == "" {
		return decision{why: "message without an author"}
	}
	mentions := id.botUserID != "" && strings.Contains(m.Text, "<@"+id.botUserID+">")
	dm := m.ChannelType == "im" || strings.HasPrefix(m.Channel, "D")
	if mentions || dm {
		d := start(env, id, m.Channel, m.TimeStamp, m.ThreadTimeStamp, author, m.Text, false, "")
		d.twin = mentions && d.act == actStart
		return d
	}
	if m.ThreadTimeStamp == "" || m.ThreadTimeStamp == m.TimeStamp {
		return decision{why: "a channel message that does not mention the bot"}
	}
	d := start(env, id, m.Channel, m.TimeStamp, m.ThreadTimeStamp, author, m.Text, false, "")
	if d.act == actStart {
		d.act = actSteer
	}
	return d
}

// decideEdit: an edit of a message in a thread that has a session reaches
// it as a new message marked as an edit; an edit that adds a mention
// starts one (Slack also sends that as an app_mention with edited set,
// deduplicated against this by the edit's identity).
func decideEdit(env *Envelope, id identity) decision {
	m := env.Message
	next, prev := m.Message, m.PreviousMessage
	if next == nil || next.Edited == nil || (prev != nil && prev.Text == next.Text) {
		return decision{why: "not a text edit"}
	}
	if d, bad := fromBot(next.User, next.BotID, id); bad {
		return d
	}
	mentioned := id.botUserID != "" && strings.Contains(next.Text, "<@"+id.botUserID+">")
	d := start(env, id, m.Channel, next.Timestamp, next.ThreadTimestamp, next.User, next.Text, true, next.Edited.Timestamp)
	dm := m.ChannelType == "im" || strings.HasPrefix(m.Channel, "D")
	if d.act == actStart && !mentioned && !dm {
		d.act = actSteer
	}
	return d
}

// modelText is what the model reads: the author, then the text without
// the bot's own mention.
func modelText(text, user, botUserID string, edited bool) string {
	text = withoutMention(text, botUserID)
	if text == "" {
		text = "(no text)"
	}
	prefix := "<@" + user + ">"
	if edited {
		prefix += " (edited an earlier message)"
	}
	return prefix + ": " + text
}

// withoutMention is text without the bot's mention, trimmed.
func withoutMention(text, botUserID string) string {
	if botUserID != "" {
		text = strings.ReplaceAll(text, "<@"+botUserID+">", "")
	}
	return strings.TrimSpace(text)
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s && s != "" {
			return true
		}
	}
	return false
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// validIDs checks Slack ids and timestamps before they go into keys:
// letters, digits and dots, as Slack's are; a colon would break the key.
func validIDs(ids ...string) bool {
	for _, id := range ids {
		if id == "" || len(id) > 64 {
			return false
		}
		for _, r := range id {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return false
			}
		}
	}
	return true
}
