package slack

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/slack-go/slack/slackevents"
	"github.com/switchboardhq/switchboard/core"
)

// Inner event types the intake acts on; others are acknowledged and
// ignored.
const (
	evAppMention    = "app_mention"
	evMessage       = "message"
	evReactionAdded = "reaction_added"
	evUninstalled   = "app_uninstalled"
	evTokensRevoked = "tokens_revoked"
	// evAgentStopped is a person pressing Slack's own stop on the
	// thread's agent session (an app configured as an agent).
	evAgentStopped = "agent_session_stopped"
)

// subscriptions are the bot events the app subscribes to, each with the
// inner event type the intake reads it as; agent ones only for an app
// configured as an agent.
var subscriptions = []subscription{
	{event: evAppMention, inner: evAppMention},
	{event: evUninstalled, inner: evUninstalled},
	{event: "message.channels", inner: evMessage},
	{event: "message.groups", inner: evMessage},
	{event: "message.im", inner: evMessage},
	{event: "message.mpim", inner: evMessage},
	{event: evReactionAdded, inner: evReactionAdded},
	{event: evTokensRevoked, inner: evTokensRevoked},
	{event: evAgentStopped, inner: evAgentStopped, agent: true},
}

type subscription struct {
	event, inner string
	agent        bool
}

// BotEvents are the bot events the app's manifest subscribes to: every
// inner event the intake acts on, the agent's with agent.
func BotEvents(agent bool) []string {
	var out []string
	for _, s := range subscriptions {
		if !s.agent || agent {
			out = append(out, s.event)
		}
	}
	return out
}

// Envelope is a decoded Events API request: the outer envelope (with the
// authorizations it was delivered for) and, for the inner events the
// gateway handles, the event decoded into slack-go's type.
type Envelope struct {
	Type      string // url_verification, event_callback, app_rate_limited
	Challenge string
	slackevents.EventsAPICallbackEvent
	InnerType string
	Mention   *slackevents.AppMentionEvent
	Message   *slackevents.MessageEvent
	Reaction  *slackevents.ReactionAddedEvent
	Revoked   *slackevents.TokensRevokedEvent
	Stopped   *slackevents.AgentSessionStoppedEvent
	// Files are a message's or mention's files.
	Files []File
	// Retry is set on a delivery Slack sends again (a retry number over
	// HTTP, a retry attempt in Socket Mode).
	Retry bool
}

// Decode parses an Events API body. Malformed JSON, or an event_callback
// without the fields every one carries, is an error wrapping
// core.ErrInvalid (400); an inner event of a type the gateway does not
// handle decodes with only InnerType set.
func Decode(body []byte) (*Envelope, error) {
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		return nil, fmt.Errorf("events api body: %v: %w", err, core.ErrInvalid)
	}
	env := &Envelope{Type: outer.Type}
	switch outer.Type {
	case slackevents.URLVerification:
		if outer.Challenge == "" {
			return nil, fmt.Errorf("url_verification without a challenge: %w", core.ErrInvalid)
		}
		env.Challenge = outer.Challenge
		return env, nil
	case slackevents.CallbackEvent:
	default:
		return env, nil // app_rate_limited and future envelopes: acknowledged
	}
	if err := json.Unmarshal(body, &env.EventsAPICallbackEvent); err != nil {
		return nil, fmt.Errorf("event_callback: %v: %w", err, core.ErrInvalid)
	}
	cb := &env.EventsAPICallbackEvent
	if cb.EventID == "" || (cb.TeamID == "" && cb.EnterpriseID == "") || cb.InnerEvent == nil || isNull(*cb.InnerEvent) {
		return nil, fmt.Errorf("event_callback without event_id, team_id or event: %w", core.ErrInvalid)
	}
	var inner struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(*cb.InnerEvent, &inner); err != nil {
		return nil, fmt.Errorf("inner event: %v: %w", err, core.ErrInvalid)
	}
	env.InnerType = inner.Type
	var target any
	switch inner.Type {
	case evAppMention:
		env.Mention = &slackevents.AppMentionEvent{}
		target = env.Mention
	case evMessage:
		env.Message = &slackevents.MessageEvent{}
		target = env.Message
	case evReactionAdded:
		env.Reaction = &slackevents.ReactionAddedEvent{}
		target = env.Reaction
	case evTokensRevoked:
		env.Revoked = &slackevents.TokensRevokedEvent{}
		target = env.Revoked
	case evAgentStopped:
		env.Stopped = &slackevents.AgentSessionStoppedEvent{}
		target = env.Stopped
	default:
		return env, nil
	}
	env.Files = filesOf(*cb.InnerEvent)
	if err := json.Unmarshal(*cb.InnerEvent, target); err != nil {
		// Rich content the rules never read (attachments, blocks, files)
		// must not cost the event: decode again without it.
		if lean, ok := withoutRichContent(*cb.InnerEvent); !ok || json.Unmarshal(lean, target) != nil {
			return nil, fmt.Errorf("%s event: %v: %w", inner.Type, err, core.ErrInvalid)
		}
	}
	return env, nil
}

// richContent are the message fields the trigger rules do not read.
var richContent = []string{"attachments", "blocks", "files", "bot_profile"}

// withoutRichContent drops richContent from a message event and the
// messages nested in it (an edit's message and previous_message).
func withoutRichContent(raw []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	for _, k := range richContent {
		delete(m, k)
	}
	for _, k := range []string{"message", "previous_message", "root"} {
		if v, ok := m[k]; ok && !isNull(v) {
			lean, ok := withoutRichContent(v)
			if !ok {
				return nil, false
			}
			m[k] = lean
		}
	}
	out, err := json.Marshal(m)
	return out, err == nil
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// tenant is the installation's external id: the enterprise of an
// organization-wide install, else the workspace.
func (env *Envelope) tenant() string {
	for _, a := range env.Authorizations {
		if a.IsEnterpriseInstall && a.EnterpriseID != "" {
			return a.EnterpriseID
		}
	}
	if env.TeamID != "" {
		return env.TeamID
	}
	return env.EnterpriseID
}

// botUserID is the bot user the event was delivered for, from the
// envelope's authorizations.
func (env *Envelope) botUserID() string {
	for _, a := range env.Authorizations {
		if a.IsBot && a.UserID != "" {
			return a.UserID
		}
	}
	return ""
}
