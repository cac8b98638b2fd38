package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/webhooks"
)

// The paths of the two webhooks, as the app's manifest gives them.
const (
	eventsPath        = "/webhooks/" + Name
	interactivityPath = eventsPath + "/interactivity"
)

// RegisterWebhooks mounts POST /webhooks/slack (Events API) and POST
// /webhooks/slack/interactivity (buttons). Both verify Slack's signature
// over the raw body before anything else.
func (p *Provider) RegisterWebhooks(mux *http.ServeMux) {
	if p.cfg.SigningSecret == "" {
		return // Socket Mode alone: nothing can be verified, nothing is taken
	}
	mux.Handle("POST "+eventsPath, &webhooks.Inbound{MaxBody: p.cfg.MaxBody, Verify: p.verify, Handle: p.handleEvent, Logger: p.log})
	mux.Handle("POST "+interactivityPath, &webhooks.Inbound{MaxBody: p.cfg.MaxBody, Verify: p.verify, Handle: p.handleInteraction, Logger: p.log})
}

// verify checks the v0 signature (slack-go's verifier) and the replay
// window (webhooks.CheckTimestamp): a request more than five minutes old
// or ahead is refused even when correctly signed.
func (p *Provider) verify(h http.Header, body []byte) error {
	if err := webhooks.CheckTimestamp(h.Get("X-Slack-Request-Timestamp"), time.Now(), webhooks.DefaultReplayWindow); err != nil {
		return err
	}
	sv, err := slackapi.NewSecretsVerifier(h, p.cfg.SigningSecret)
	if err != nil {
		return fmt.Errorf("%w (%v)", webhooks.ErrBadSignature, err)
	}
	if _, err := sv.Write(body); err != nil {
		return fmt.Errorf("%w (%v)", webhooks.ErrBadSignature, err)
	}
	if err := sv.Ensure(); err != nil {
		return webhooks.ErrBadSignature
	}
	return nil
}

// handleEvent decides an event and stores what it asks for before
// answering; Slack API calls (👀, history) happen after, in the sink.
func (p *Provider) handleEvent(w http.ResponseWriter, r *http.Request, body []byte) error {
	env, err := Decode(body)
	if err != nil {
		return err
	}
	switch env.Type {
	case "url_verification":
		web.WriteJSON(w, http.StatusOK, map[string]string{"challenge": env.Challenge})
		return nil
	case "event_callback":
	default:
		w.WriteHeader(http.StatusOK)
		return nil
	}
	log := p.log.With("event_id", env.EventID, "event_type", env.InnerType, "team_id", env.TeamID)
	if retry := r.Header.Get("X-Slack-Retry-Num"); retry != "" {
		log = log.With("retry", retry, "retry_reason", r.Header.Get("X-Slack-Retry-Reason"))
		env.Retry = true
	}
	if err := p.handleCallback(r.Context(), env, log); err != nil {
		return err // a 500: Slack retries, and the dedupe keys make that safe
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (p *Provider) handleCallback(ctx context.Context, env *Envelope, log *slog.Logger) error {
	tenant := env.tenant()
	if p.single != "" && tenant != p.single && env.TeamID != p.single {
		log.Debug("event of another team ignored (single-workspace mode)")
		return nil
	}
	in, err := p.installation(ctx, tenant)
	if errors.Is(err, core.ErrNotFound) {
		log.Info("event from a workspace that has not installed the app; ignored", "tenant", tenant)
		return nil
	}
	if err != nil {
		return err
	}
	d := decide(env, p.identityOf(in, env))
	switch {
	case d.act == actIgnore:
		log.Debug("event ignored", "why", d.why)
		return nil
	case d.act == actForget:
		log.Info("slack app uninstalled or its token revoked: forgetting the tokens", "installation_id", in.ID)
		return p.forget(ctx, in)
	case !in.HasToken:
		log.Info("event for an installation without a token; ignored", "installation_id", in.ID)
		return nil
	case !in.Policy.Allows(d.msg.Channel, d.msg.User):
		log.Info("trigger refused by the access policy", "installation_id", in.ID, "user", d.msg.User, "channel", d.msg.Channel)
		p.tellDenied(in, d)
		return nil
	}
	var atts []core.Attachment
	if d.act != actInterrupt {
		atts = p.attachments(in, env.Files)
	}
	input, err := d.input(atts)
	if err != nil {
		return err
	}
	t := providers.Trigger{
		Installation: in,
		Origin:       core.Origin{Provider: Name, Key: d.key, TenantID: in.ExternalID, URL: permalink(in, d.msg.Channel, d.thread)},
		Tenant:       Name + ":" + d.msg.Team,
		Input:        input,
		Dedupe:       d.dedupe,
		Twin:         d.twin && !env.Retry,
		// Only a mention or a DM starts a session; a reply or a stop
		// steers the thread's session, if it has one.
		Continue: d.act != actStart,
		Actor:    d.msg.User,
	}
	if l, ok := providers.ParseBudgetCommand(d.said); ok && d.act != actInterrupt {
		t.Budget = &l
	}
	if u, ok := providers.ParseContinue(d.said); ok && d.act == actStart {
		t.ContinueURL = u
	}
	if providers.ParseEditorCommand(d.said) && d.act == actStart {
		// Answered with chat.postEphemeral: only the asker sees the token.
		t.Editor, t.Private = true, true
		t.Person, t.Guest = p.asker(ctx, in, d.msg.User, userTeam(env))
	}
	res, err := p.cfg.Intake.Route(ctx, t)
	if err != nil {
		return err // a 500: Slack retries, and the dedupe keys make that safe
	}
	switch res.Outcome {
	case providers.NoAgent:
		p.tellThread(in, d, "I can't answer yet: no agent is configured for this workspace. An admin can set `SWITCHBOARD_MODEL` or bind an agent with `/v1/installations`.")
	case providers.BudgetSet, providers.BudgetRefused, providers.Linked, providers.LinkRefused:
		p.tellThread(in, d, res.Note)
	case providers.EditorAnswered:
		p.bg.Go(func(ctx context.Context) { p.ephemeral(ctx, in, d, res.Note) })
	}
	return nil
}

// asker is how Slack shows user to others (display name, else real
// name, else their mention) and whether they are a guest: not a member
// of the installation's workspace (of its organization, for an
// organization-wide install), as a person of another workspace in a
// shared channel is. Whom Slack cannot say is a guest: a token is given
// only to a known member.
func (p *Provider) asker(ctx context.Context, in *core.Installation, user, eventTeam string) (name string, guest bool) {
	name = "<@" + user + ">"
	var u *slackapi.User
	a, err := p.client(ctx, in)
	if err == nil {
		err = a.do(ctx, "users.info", func(ctx context.Context) error {
			var err error
			u, err = a.c.GetUserInfoContext(ctx, user)
			return err
		})
	}
	if err != nil {
		p.log.Warn("read a user's name and workspace", "user", user, "err", err)
	}
	team, enterprise := eventTeam, ""
	if u != nil {
		switch {
		case u.Profile.DisplayName != "":
			name = u.Profile.DisplayName
		case u.RealName != "":
			name = u.RealName
		}
		if team == "" {
			team = u.TeamID
		}
		enterprise = u.Enterprise.EnterpriseID
	}
	if org := in.Metadata["enterprise_id"]; org != "" && in.ExternalID == org {
		return name, enterprise != org
	}
	home := in.Metadata["team_id"]
	if home == "" {
		home = in.ExternalID
	}
	return name, team == "" || team != home
}

// userTeam is the workspace of the person who wrote the event's message,
// which Slack tells in a shared channel; "" when it does not.
func userTeam(env *Envelope) string {
	switch {
	case env.Mention != nil:
		return env.Mention.UserTeam
	case env.Message != nil:
		return env.Message.UserTeam
	}
	return ""
}

// input is the decision's input: the message with its attachments, or an
// interrupt.
func (d decision) input(atts []core.Attachment) (core.Event, error) {
	if d.act == actInterrupt {
		return core.NewInput(core.TypeUserInterrupt, nil), nil
	}
	ref := d.msg
	body, err := json.Marshal(inputBody{Text: d.text, Slack: &ref, Attachments: atts})
	if err != nil {
		return core.Event{}, err
	}
	return core.NewInput(core.TypeUserMessage, body), nil
}

// permalink links to the thread when the workspace URL is known (learned
// at install); it costs no API call.
func permalink(in *core.Installation, channel, thread string) string {
	base := in.Metadata["url"]
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/archives/" + channel + "/p" + strings.Replace(thread, ".", "", 1)
}

// tellDenied tells a person outside the access policy, once, that the
// agent will not answer them (an ephemeral message only they see).
func (p *Provider) tellDenied(in *core.Installation, d decision) {
	if d.msg.User == "" {
		return
	}
	p.bg.Go(func(ctx context.Context) {
		first, err := p.cfg.Installations.Once(ctx, "slack:denied:"+in.ExternalID+":"+d.msg.User, time.Now().Add(30*24*time.Hour))
		if err != nil || !first {
			return
		}
		p.ephemeral(ctx, in, d, "Sorry, I only answer the people and channels an admin has allowed, and you are not among them here. (You won't hear this again.)")
	})
}

// ephemeral tells the decision's author something only they see, in its
// thread.
func (p *Provider) ephemeral(ctx context.Context, in *core.Installation, d decision, text string) {
	a, err := p.client(ctx, in)
	if err != nil {
		return
	}
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(text, false)}
	if d.thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(d.thread))
	}
	err = a.do(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := a.c.PostEphemeralContext(ctx, d.msg.Channel, d.msg.User, opts...)
		return err
	})
	if err != nil {
		p.log.Warn("tell a user", "user", d.msg.User, "err", err)
	}
}

func (p *Provider) tellThread(in *core.Installation, d decision, text string) {
	p.bg.Go(func(ctx context.Context) {
		a, err := p.client(ctx, in)
		if err == nil {
			_, err = a.post(ctx, d.msg.Channel, slackapi.MsgOptionText(text, false), slackapi.MsgOptionTS(d.thread))
		}
		if err != nil {
			p.log.Warn("post a note into a thread", "channel", d.msg.Channel, "err", err)
		}
	})
}
