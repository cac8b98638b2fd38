package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/webhooks"
)

// Metadata keys of a Linear session.
const (
	metaAgentSession = "linear_agent_session_id"
	metaIssueID      = "linear_issue_id"
	metaIssue        = "linear_issue_identifier"
)

// inputBody is the body of a user.message that came from Linear: the
// text the model reads, and where it came from.
type inputBody struct {
	Text string `json:"text"`
	// Kind is core.MessageKindAside for a message that came while a tool
	// call waits for a person's allow or deny: the question stays open.
	Kind        string            `json:"kind,omitempty"`
	Linear      *inputRef         `json:"linear,omitempty"`
	Attachments []core.Attachment `json:"attachments,omitempty"`
}

// inputRef is what the sink needs of a Linear input.
type inputRef struct {
	Action       string `json:"action"` // created | prompted
	AgentSession string `json:"agent_session_id"`
	Activity     string `json:"activity_id,omitempty"`
	// Waiting: the message arrived while a tool call waits for a
	// confirmation, which stays open; it is read with the answer.
	Waiting bool `json:"waiting,omitempty"`
}

// webhookPath is where Linear delivers the app's webhooks.
const webhookPath = "/webhooks/" + Name

// RegisterWebhooks mounts POST /webhooks/linear; the signature and the
// signed timestamp are checked over the raw body before anything else.
func (p *Provider) RegisterWebhooks(mux *http.ServeMux) {
	mux.Handle("POST "+webhookPath, &webhooks.Inbound{MaxBody: p.cfg.MaxBody, Verify: p.verify, Handle: p.handle, Logger: p.log})
}

// verify checks linear-signature (hex HMAC-SHA256 of the body), then the
// body's webhookTimestamp: the timestamp is inside the signed body, so it
// is read only once the signature holds, and a body whose timestamp
// cannot be read is refused like a stale one.
func (p *Provider) verify(h http.Header, body []byte) error {
	if !webhooks.EqualSignature(strings.ToLower(strings.TrimSpace(h.Get("Linear-Signature"))), webhooks.HMACHex(p.cfg.WebhookSecret, body)) {
		return webhooks.ErrBadSignature
	}
	var ts struct {
		WebhookTimestamp json.Number `json:"webhookTimestamp"`
	}
	if err := json.Unmarshal(body, &ts); err != nil {
		return nil // signed but malformed: the handler answers 400
	}
	ms, err := ts.WebhookTimestamp.Float64()
	if err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return fmt.Errorf("linear webhook without a webhookTimestamp: %w", webhooks.ErrStale)
	}
	d := p.cfg.Now().Sub(time.UnixMilli(int64(ms)))
	if d > p.cfg.ReplayWindow || d < -p.cfg.ReplayWindow {
		return webhooks.ErrStale
	}
	return nil
}

// handle decides a webhook and stores what it asks for before the 200.
func (p *Provider) handle(w http.ResponseWriter, r *http.Request, body []byte) error {
	pl, err := Decode(body)
	if err != nil {
		return err
	}
	delivery := r.Header.Get("Linear-Delivery")
	log := p.log.With("type", pl.Type, "action", pl.Action, "delivery", delivery, "organization_id", pl.OrganizationID)
	if err := p.handlePayload(r.Context(), pl, delivery, log); err != nil {
		return err // a 5xx: Linear retries, and the dedupe key makes that safe
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (p *Provider) handlePayload(ctx context.Context, pl *Payload, delivery string, log *slog.Logger) error {
	var dedupe []string
	if delivery != "" {
		dedupe = []string{"linear:delivery:" + delivery}
	} else {
		log.Warn("linear webhook without a Linear-Delivery header: it cannot be deduplicated")
	}
	switch {
	case pl.Type == typeAgentSessionEvent && (pl.Action == actionCreated || pl.Action == actionPrompted):
		return p.agentSessionEvent(ctx, pl, dedupe, log)
	case pl.Type == typeOAuthApp && pl.Action == actionRevoked:
		return p.revoked(ctx, pl, log)
	case pl.Type == typeIssue && pl.Action == actionUpdate, pl.Type == typeAppNotification && pl.Action == actionUnassigned:
		return p.delegateRemoved(ctx, pl, dedupe, log)
	}
	log.Debug("linear webhook needs nothing")
	return nil
}

// agentSessionEvent starts, steers or stops the agent session's session.
func (p *Provider) agentSessionEvent(ctx context.Context, pl *Payload, dedupe []string, log *slog.Logger) error {
	in, err := p.knownInstallation(ctx, pl)
	if err != nil {
		return err
	}
	k := key(pl.OrganizationID, pl.AgentSession.ID)
	log = log.With("key", k)
	// The delivery header is not signed: the event's own identity (the
	// agent session's creation, the prompt's activity) is a second key,
	// so a captured body sent again under another delivery id within the
	// replay window adds nothing either.
	if id := eventIdentity(pl); id != "" {
		dedupe = append(slices.Clip(dedupe), id)
	}
	if team, user := pl.AgentSession.Issue.teamKey(), pl.actor(); !in.Policy.Allows(team, user) {
		log.Info("trigger refused by the access policy", "installation_id", in.ID, "team", team, "user", user)
		if pl.AgentActivity == nil || pl.AgentActivity.Signal != signalStop {
			p.tellRefused(in, pl)
		}
		return nil
	}
	if pl.Action == actionPrompted && pl.AgentActivity.Signal == signalStop {
		return p.interrupt(ctx, k, dedupe, log)
	}
	var w *waiting
	if pl.Action == actionPrompted {
		// While a tool call waits for a person, allow or deny answers it.
		if w, err = p.waitingFor(ctx, k); err != nil {
			return err
		}
		if result, ok := answerOf(pl.AgentActivity.Text()); ok && w != nil {
			return p.confirm(ctx, in, pl, w, result, dedupe, log)
		}
		if l, ok := providers.ParseBudgetCommand(pl.AgentActivity.Text()); ok {
			return p.command(ctx, in, pl, providers.Trigger{Budget: &l})
		}
		if u, ok := providers.ParseContinue(pl.AgentActivity.Text()); ok {
			return p.command(ctx, in, pl, providers.Trigger{ContinueURL: u})
		}
		if providers.ParseEditorCommand(pl.AgentActivity.Text()) {
			// Linear has no reply only the asker sees: no token here.
			return p.command(ctx, in, pl, providers.Trigger{Editor: true})
		}
	}
	if pl.Action == actionPrompted && isRetryWord(pl.AgentActivity.Text()) {
		if queued, err := p.retry(ctx, in, k, dedupe, log); queued || err != nil {
			return err
		}
		// Nothing to retry: the word reaches the agent as a message.
	}
	text := ""
	ref := &inputRef{Action: pl.Action, AgentSession: pl.AgentSession.ID}
	if pl.Action == actionCreated {
		text = firstPrompt(pl)
	} else {
		text = strings.TrimSpace(pl.AgentActivity.Text())
		ref.Activity = pl.AgentActivity.ID
		ref.Waiting = w != nil
		if text == "" {
			log.Info("prompt without text; ignored")
			return nil
		}
	}
	atts := p.attachments(in, text)
	body := inputBody{Text: text, Linear: ref, Attachments: atts}
	if ref.Waiting {
		body.Kind = core.MessageKindAside
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	s := pl.AgentSession
	meta := map[string]string{metaAgentSession: s.ID}
	origin := core.Origin{Provider: Name, Key: k, TenantID: pl.OrganizationID, URL: s.URL}
	if iss := s.Issue; iss != nil {
		meta[metaIssueID], meta[metaIssue] = iss.ID, iss.Identifier
		origin.URL, origin.Title = iss.URL, iss.Title
	} else if s.IssueID != "" {
		meta[metaIssueID] = s.IssueID
	}
	// A prompt on an agent session the gateway never saw created (it was
	// down) starts the session as well.
	_, err = p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: origin, Metadata: meta, Tenant: Name + ":" + pl.OrganizationID,
		Input: core.NewInput(core.TypeUserMessage, raw), Dedupe: dedupe})
	return err
}

// actor is who created the agent session or wrote the prompt.
func (pl *Payload) actor() string {
	if pl.Action == actionPrompted && pl.AgentActivity != nil {
		if a := pl.AgentActivity; a.UserID != "" || a.User == nil {
			return a.UserID
		}
		return pl.AgentActivity.User.ID
	}
	if s := pl.AgentSession; s.CreatorID != "" || s.Creator == nil {
		return s.CreatorID
	}
	return pl.AgentSession.Creator.ID
}

// tellRefused answers a trigger from outside the installation's access
// policy with an error activity on its agent session, once (the id is
// derived from the event), after the ack: Linear shows the agent as
// unresponsive to a mention that gets no activity at all.
func (p *Provider) tellRefused(in *core.Installation, pl *Payload) {
	p.tell(in, pl, "error", "I am not set up to take requests from you in this team. A workspace admin decides who may call me.")
}

// tell posts an activity of kind that answers the event in pl and starts
// no turn (a refusal, a budget command), once per event.
func (p *Provider) tell(in *core.Installation, pl *Payload, kind, body string) {
	if !in.HasToken {
		return
	}
	a := activity{ID: activityID(pl.AgentSession.ID, "told:"+eventIdentity(pl), 0), AgentSession: pl.AgentSession.ID,
		Content: map[string]any{"type": kind, "body": body}}
	org := pl.OrganizationID
	p.bg.Go(func(ctx context.Context) {
		if err := p.budgets.wait(ctx, org, prioAnswer); err != nil {
			return
		}
		err := p.newAPI(in).createActivity(ctx, a)
		if ae := asAPIError(err); err != nil && (ae == nil || !ae.Exists) {
			p.log.Warn("answer an event that starts no turn", "organization_id", org, "agent_session_id", a.AgentSession, "err", err)
		}
	})
}

// eventIdentity is the dedupe key of what an AgentSessionEvent tells:
// an agent session is created once, a prompt is one activity; "" when the
// body names neither.
func eventIdentity(pl *Payload) string {
	switch {
	case pl.Action == actionCreated && pl.AgentSession.ID != "":
		return "linear:created:" + pl.OrganizationID + ":" + pl.AgentSession.ID
	case pl.Action == actionPrompted && pl.AgentActivity.ID != "":
		return "linear:activity:" + pl.OrganizationID + ":" + pl.AgentActivity.ID
	}
	return ""
}

// knownInstallation is the event's organization's installation; one not
// seen before (installed while the gateway was down, or its record lost)
// is recorded lazily without tokens.
func (p *Provider) knownInstallation(ctx context.Context, pl *Payload) (*core.Installation, error) {
	in, err := p.installation(ctx, pl.OrganizationID)
	if err == nil || !errors.Is(err, core.ErrNotFound) {
		return in, err
	}
	p.log.Warn("agent session event from an organization without an installation: recorded; install the app to let the agent answer", "organization_id", pl.OrganizationID)
	return p.cfg.Installations.SaveInstallation(ctx, &core.Installation{Provider: Name, ExternalID: pl.OrganizationID,
		Metadata: map[string]string{"app_user_id": pl.AppUserID, "organization_id": pl.OrganizationID}}, nil, nil)
}

// interrupt queues a user.interrupt on the session of key, if there is one.
func (p *Provider) interrupt(ctx context.Context, k string, dedupe []string, log *slog.Logger) error {
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Origin: core.Origin{Provider: Name, Key: k},
		Input: core.NewInput(core.TypeUserInterrupt, nil), Dedupe: dedupe, Continue: true})
	if err == nil && res.Outcome == providers.Queued {
		log.Info("linear stop: session interrupted", "session_id", res.Session.ID)
	}
	return err
}

// command runs a prompt that is a thread command (t's Budget or
// ContinueURL: "budget $5", "continue <URL>") on the agent session's key
// and says how it went in the session: a thought when it did (a paused
// turn goes on working), an error when it was refused.
func (p *Provider) command(ctx context.Context, in *core.Installation, pl *Payload, t providers.Trigger) error {
	t.Installation, t.Origin = in, core.Origin{Provider: Name, Key: key(pl.OrganizationID, pl.AgentSession.ID), TenantID: pl.OrganizationID}
	t.Input, t.Actor, t.Continue = core.NewInput(core.TypeUserMessage, nil), pl.actor(), true
	res, err := p.cfg.Intake.Route(ctx, t)
	switch {
	case err != nil:
		return err
	case res.Outcome == providers.BudgetSet, res.Outcome == providers.Linked, res.Outcome == providers.EditorAnswered:
		p.tell(in, pl, "thought", res.Note)
	case res.Outcome == providers.BudgetRefused, res.Outcome == providers.LinkRefused:
		p.tell(in, pl, "error", res.Note)
	}
	return nil
}

// isRetryWord reports whether a prompt is the word that retries the last
// turn: "retry", alone, in any case, with a closing punctuation mark.
func isRetryWord(text string) bool {
	return strings.EqualFold(strings.TrimRight(strings.TrimSpace(text), ".!"), "retry")
}

// retry queues a user.retry on the session of key when its last turn can
// be retried (core.RetryTurn); queued is false, and nothing written, when
// there is no such session or nothing to retry.
func (p *Provider) retry(ctx context.Context, in *core.Installation, k string, dedupe []string, log *slog.Logger) (queued bool, err error) {
	s, err := p.cfg.Sessions.SessionByKey(ctx, k)
	if errors.Is(err, core.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	retry, err := core.NewRetry(s, "")
	if err != nil {
		log.Info("linear retry: nothing to retry; passed on as a message", "session_id", s.ID, "err", err)
		return false, nil
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: core.Origin{Provider: Name, Key: k},
		Input: retry, Dedupe: dedupe, Continue: true})
	if err != nil {
		return false, err
	}
	if res.Outcome == providers.Queued {
		log.Info("linear retry queued", "session_id", res.Session.ID)
	}
	return true, nil
}

// activeStatuses are those of sessions a removed delegate may stop.
var activeStatuses = []core.Status{core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput}

// delegateRemoved interrupts the issue's running sessions when the app
// was removed as its delegate (an Issue update whose delegate moved away
// from the app user, or the app user's issueUnassignedFromYou
// notification). Sessions are keyed by agent session, not by
// issue, so they are found by the issue id on their metadata; this scans
// the session records of each active status, which is acceptable for an
// event this rare.
func (p *Provider) delegateRemoved(ctx context.Context, pl *Payload, dedupe []string, log *slog.Logger) error {
	in, err := p.installation(ctx, pl.OrganizationID)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	issue, ok := pl.delegateRemoved(in.Metadata["app_user_id"])
	if !ok {
		return nil
	}
	for _, st := range activeStatuses {
		after := ""
		for {
			list, err := p.cfg.Sessions.ListSessions(ctx, core.SessionFilter{Status: st, Provider: Name, After: after, Limit: 1000})
			if err != nil {
				return err
			}
			for _, s := range list.Sessions {
				if s.Origin == nil || s.Origin.Provider != Name || s.Origin.TenantID != pl.OrganizationID || s.Metadata[metaIssueID] != issue {
					continue
				}
				keys := make([]string, len(dedupe))
				for i, d := range dedupe {
					keys[i] = d + ":" + s.ID
				}
				if err := p.interrupt(ctx, s.Origin.Key, keys, log.With("issue_id", issue, "why", "delegate removed")); err != nil {
					return err
				}
			}
			if !list.HasMore {
				break
			}
			after = list.Next
		}
	}
	return nil
}

// revoked forgets the organization's tokens when the app is revoked.
func (p *Provider) revoked(ctx context.Context, pl *Payload, log *slog.Logger) error {
	if pl.OAuthClientID != "" && pl.OAuthClientID != p.cfg.ClientID {
		log.Info("revocation of another OAuth app; ignored", "oauth_client_id", pl.OAuthClientID)
		return nil
	}
	in, err := p.installation(ctx, pl.OrganizationID)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	log.Info("linear app revoked: forgetting the tokens", "installation_id", in.ID)
	return p.forget(ctx, in)
}

// firstPrompt is the first input of a created agent session: Linear's
// prompt context (issue, comments and guidance, formatted for an agent),
// the thread's earlier comments and the guidance rules.
func firstPrompt(pl *Payload) string {
	var b strings.Builder
	if c := strings.TrimSpace(pl.PromptContext); c != "" {
		b.WriteString(c)
	} else if iss := pl.AgentSession.Issue; iss != nil {
		fmt.Fprintf(&b, "Issue %s: %s\n\n%s", iss.Identifier, iss.Title, iss.Description)
		if c := pl.AgentSession.Comment; c != nil && c.Body != "" {
			fmt.Fprintf(&b, "\n\nComment:\n%s", c.Body)
		}
	}
	if len(pl.PreviousComments) > 0 {
		b.WriteString("\n\nEarlier comments in the thread:")
		for _, c := range pl.PreviousComments {
			who := c.UserID
			if who == "" {
				who = "someone"
			}
			fmt.Fprintf(&b, "\n- %s: %s", who, strings.TrimSpace(c.Body))
		}
	}
	if len(pl.Guidance) > 0 {
		b.WriteString("\n\nGuidance for this workspace and team (nearest team first):")
		for _, g := range pl.Guidance {
			if w := g.where(); w != "" {
				fmt.Fprintf(&b, "\n- (%s) %s", w, strings.TrimSpace(g.Body))
			} else {
				fmt.Fprintf(&b, "\n- %s", strings.TrimSpace(g.Body))
			}
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		return s
	}
	return "You were mentioned in Linear (agent session " + pl.AgentSession.ID + ")."
}
