package linear

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Webhook types and actions the intake acts on; others are acknowledged
// and ignored.
const (
	typeAgentSessionEvent = "AgentSessionEvent"
	typeOAuthApp          = "OAuthApp"
	typeIssue             = "Issue"
	typeAppNotification   = "AppUserNotification"

	actionCreated  = "created"
	actionPrompted = "prompted"
	actionRevoked  = "revoked"
	actionUpdate   = "update"
	// actionUnassigned is the app user's notification that it was removed
	// from an issue (as its delegate).
	actionUnassigned = "issueUnassignedFromYou"

	signalStop = "stop"
)

// Payload is a decoded webhook body: the fields every Linear webhook
// carries, and those of the types the gateway handles
// (AgentSessionEventWebhookPayload, OAuthAppWebhookPayload, and the
// EntityWebhookPayload of an Issue update), as in Linear's schema.
type Payload struct {
	Type           string `json:"type"`
	Action         string `json:"action"`
	OrganizationID string `json:"organizationId"`
	WebhookID      string `json:"webhookId"`
	// WebhookTimestamp is when Linear sent it, in unix milliseconds; it is
	// covered by the signature.
	WebhookTimestamp float64 `json:"webhookTimestamp"`

	// AgentSessionEvent.
	AppUserID        string         `json:"appUserId"`
	OAuthClientID    string         `json:"oauthClientId"`
	AgentSession     *AgentSession  `json:"agentSession"`
	AgentActivity    *AgentActivity `json:"agentActivity"`
	PromptContext    string         `json:"promptContext"`
	PreviousComments []Comment      `json:"previousComments"`
	Guidance         []GuidanceRule `json:"guidance"`
	// Notification is AppUserNotification's NotificationWebhookPayload.
	Notification *Notification   `json:"notification"`
	Data         json.RawMessage `json:"data"`        // entity webhooks
	UpdatedFrom  json.RawMessage `json:"updatedFrom"` // entity updates
	URL          string          `json:"url"`
}

// AgentSession is AgentSessionWebhookPayload.
type AgentSession struct {
	ID             string   `json:"id"`
	AppUserID      string   `json:"appUserId"`
	OrganizationID string   `json:"organizationId"`
	Status         string   `json:"status"`
	IssueID        string   `json:"issueId"`
	Issue          *Issue   `json:"issue"`
	CommentID      string   `json:"commentId"`
	Comment        *Comment `json:"comment"`
	CreatorID      string   `json:"creatorId"`
	Creator        *User    `json:"creator"`
	URL            string   `json:"url"`
}

// AgentActivity is AgentActivityWebhookPayload: a person's prompt.
type AgentActivity struct {
	ID      string `json:"id"`
	Signal  string `json:"signal"`
	Content struct {
		Type string `json:"type"`
		Body string `json:"body"`
	} `json:"content"`
	// Body is not in the schema's payload type; older payloads and some
	// SDK versions put the prompt's text there.
	Body   string `json:"body"`
	UserID string `json:"userId"`
	User   *User  `json:"user"`
}

// Text is the prompt's text.
func (a *AgentActivity) Text() string {
	if a.Content.Body != "" {
		return a.Content.Body
	}
	return a.Body
}

// Notification is the part of an app user notification the intake reads.
type Notification struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	IssueID string `json:"issueId"`
	Issue   *Issue `json:"issue"`
}

// Issue is IssueWithDescriptionChildWebhookPayload.
type Issue struct {
	ID          string `json:"id"`
	Identifier  string `json:"identifier"`
	Title       string `json:"title"`
	Description string `json:"description"`
	URL         string `json:"url"`
	TeamID      string `json:"teamId"`
	Team        *struct {
		Key string `json:"key"`
	} `json:"team"`
}

// teamKey is the key of the issue's team: the payload's team, else the
// identifier's prefix (ENG-123 is team ENG's).
func (i *Issue) teamKey() string {
	if i == nil {
		return ""
	}
	if i.Team != nil && i.Team.Key != "" {
		return i.Team.Key
	}
	if k, _, ok := strings.Cut(i.Identifier, "-"); ok {
		return k
	}
	return ""
}

// Comment is CommentChildWebhookPayload.
type Comment struct {
	ID      string `json:"id"`
	Body    string `json:"body"`
	UserID  string `json:"userId"`
	IssueID string `json:"issueId"`
}

// User is UserChildWebhookPayload.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// GuidanceRule is GuidanceRuleWebhookPayload.
type GuidanceRule struct {
	Body string `json:"body"`
	// Origin is where it was defined: the workspace ("Organization") or
	// a team.
	Origin struct {
		Type string `json:"type"`
		Team *struct {
			Key  string `json:"key"`
			Name string `json:"name"`
		} `json:"team"`
	} `json:"origin"`
}

// where names a rule's origin for the model.
func (g GuidanceRule) where() string {
	if g.Origin.Team != nil && g.Origin.Team.Name != "" {
		return "team " + g.Origin.Team.Name
	}
	if g.Origin.Type == "Organization" {
		return "workspace"
	}
	return ""
}

// issueData is the part of an Issue entity the intake reads.
type issueData struct {
	ID         string  `json:"id"`
	Identifier string  `json:"identifier"`
	DelegateID *string `json:"delegateId"`
}

// Decode parses a webhook body. Malformed JSON, a body without a type, or
// a handled type without the fields it needs is an error wrapping
// core.ErrInvalid (400); a type the gateway does not handle decodes with
// only the common fields read.
func Decode(body []byte) (*Payload, error) {
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("linear webhook body: %v: %w", err, core.ErrInvalid)
	}
	if p.Type == "" {
		return nil, fmt.Errorf("linear webhook without a type: %w", core.ErrInvalid)
	}
	switch p.Type {
	case typeAgentSessionEvent:
		if p.AgentSession == nil || p.AgentSession.ID == "" {
			return nil, fmt.Errorf("AgentSessionEvent without an agent session: %w", core.ErrInvalid)
		}
		if p.OrganizationID == "" {
			p.OrganizationID = p.AgentSession.OrganizationID
		}
		if p.AppUserID == "" {
			p.AppUserID = p.AgentSession.AppUserID
		}
		if p.OrganizationID == "" {
			return nil, fmt.Errorf("AgentSessionEvent without an organization: %w", core.ErrInvalid)
		}
		if p.Action == actionPrompted && p.AgentActivity == nil {
			return nil, fmt.Errorf("prompted AgentSessionEvent without an activity: %w", core.ErrInvalid)
		}
	case typeOAuthApp:
		if p.OrganizationID == "" {
			return nil, fmt.Errorf("OAuthApp event without an organization: %w", core.ErrInvalid)
		}
	}
	return &p, nil
}

// key is the session key of an agent session.
func key(org, agentSession string) string { return "linear:" + org + ":" + agentSession }

// parseKey splits a session key into organization and agent session.
func parseKey(k string) (org, agentSession string, err error) {
	rest, ok := strings.CutPrefix(k, "linear:")
	if ok {
		org, agentSession, ok = strings.Cut(rest, ":")
	}
	if !ok || org == "" || agentSession == "" || strings.Contains(agentSession, ":") {
		return "", "", fmt.Errorf("linear session key %q: %w", k, core.ErrInvalid)
	}
	return org, agentSession, nil
}

// delegateRemoved reports the issue whose delegate an Issue update moved
// away from appUser: updatedFrom names the previous delegate, and data
// the new one (none, or another agent).
func (p *Payload) delegateRemoved(appUser string) (issueID string, ok bool) {
	if p.Type == typeAppNotification && p.Action == actionUnassigned && p.Notification != nil {
		if p.AppUserID != "" && appUser != "" && p.AppUserID != appUser {
			return "", false
		}
		id := p.Notification.IssueID
		if id == "" && p.Notification.Issue != nil {
			id = p.Notification.Issue.ID
		}
		return id, id != ""
	}
	if p.Type != typeIssue || p.Action != actionUpdate || appUser == "" || len(p.UpdatedFrom) == 0 {
		return "", false
	}
	var from map[string]json.RawMessage
	if json.Unmarshal(p.UpdatedFrom, &from) != nil {
		return "", false
	}
	prev, changed := from["delegateId"]
	if !changed {
		return "", false
	}
	var was *string
	if json.Unmarshal(prev, &was) != nil || was == nil || *was != appUser {
		return "", false
	}
	var d issueData
	if json.Unmarshal(p.Data, &d) != nil || d.ID == "" {
		return "", false
	}
	if d.DelegateID != nil && *d.DelegateID == appUser {
		return "", false
	}
	return d.ID, true
}
