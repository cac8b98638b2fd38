package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// Action ids of the gateway's buttons.
const (
	actionStop   = "sb_stop"
	actionAnswer = "sb_answer" // followed by the option's index
	actionAllow  = "sb_allow"
	actionDeny   = "sb_deny"
	actionRetry  = "sb_retry"
)

// actionValue is a button's value: the session, and the answer or the
// tool call it is about.
type actionValue struct {
	Session string `json:"s"`
	Answer  string `json:"v,omitempty"`
	ToolUse string `json:"t,omitempty"`
	Turn    string `json:"u,omitempty"` // the turn a Retry runs again
}

func (v actionValue) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// handleInteraction serves button clicks (block_actions): Stop interrupts
// the turn, an answer resumes a question, allow/deny settles an ask-first
// tool call. The click is stored before the 200; the message is updated
// after it.
func (p *Provider) handleInteraction(w http.ResponseWriter, r *http.Request, body []byte) error {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return fmt.Errorf("interactivity body has no payload: %w", core.ErrInvalid)
	}
	if err := p.interact(r.Context(), []byte(form.Get("payload"))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// interact stores what an interaction payload (a click) asks for; the
// events URL and Socket Mode share it.
func (p *Provider) interact(ctx context.Context, payload []byte) error {
	var ic slackapi.InteractionCallback
	if err := json.Unmarshal(payload, &ic); err != nil {
		return fmt.Errorf("interactivity payload: %v: %w", err, core.ErrInvalid)
	}
	if ic.Type == slackapi.InteractionTypeBlockActions {
		for _, a := range ic.ActionCallback.BlockActions {
			if err := p.handleAction(ctx, &ic, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Provider) handleAction(ctx context.Context, ic *slackapi.InteractionCallback, a *slackapi.BlockAction) error {
	if !strings.HasPrefix(a.ActionID, "sb_") {
		return nil
	}
	var v actionValue
	if err := json.Unmarshal([]byte(a.Value), &v); err != nil || v.Session == "" {
		return fmt.Errorf("button value %q: %w", a.Value, core.ErrInvalid)
	}
	log := p.log.With("session_id", v.Session, "action_id", a.ActionID, "user", ic.User.ID)
	tenant := ic.Team.ID
	if ic.IsEnterpriseInstall && ic.Enterprise.ID != "" {
		tenant = ic.Enterprise.ID
	}
	s, err := p.cfg.Sessions.GetSession(ctx, v.Session)
	if errors.Is(err, core.ErrNotFound) {
		log.Info("button of an unknown session; ignored")
		return nil
	}
	if err != nil {
		return err
	}
	// The session must be this workspace's: a value from another tenant's
	// message is not honoured.
	if s.Origin == nil || s.Origin.Provider != Name || s.Origin.TenantID != tenant {
		log.Warn("button names a session of another workspace; ignored", "tenant", tenant)
		return nil
	}
	in, err := p.installation(ctx, tenant)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return nil
		}
		return err
	}
	channel, msgTS := ic.Container.ChannelID, ic.Container.MessageTs
	if channel == "" {
		channel, msgTS = ic.Channel.ID, ic.Message.Timestamp
	}
	if !in.Policy.Allows(channel, ic.User.ID) {
		log.Info("button refused by the access policy")
		p.tellDenied(in, decision{msg: msgRef{Channel: channel, User: ic.User.ID}, thread: ic.Container.ThreadTs})
		return nil
	}
	var input core.Event
	var note string
	switch {
	case a.ActionID == actionStop:
		input, note = core.NewInput(core.TypeUserInterrupt, nil), "⏹ Stopped by <@"+ic.User.ID+">"
	case strings.HasPrefix(a.ActionID, actionAnswer):
		// No slack reference: the clicked message is the bot's own question,
		// which settle updates instead of a 👀.
		raw, _ := json.Marshal(inputBody{Text: "<@" + ic.User.ID + ">: " + v.Answer})
		input, note = core.NewInput(core.TypeUserMessage, raw), "<@"+ic.User.ID+"> answered *"+escapeText(v.Answer)+"*"
	case (a.ActionID == actionAllow || a.ActionID == actionDeny) && !ic.IsEnterpriseInstall && ic.User.TeamID != "" && ic.User.TeamID != ic.Team.ID:
		// A guest from another workspace (a shared channel) may read the
		// thread but not answer for this one.
		log.Info("allow or deny from another workspace refused", "user_team", ic.User.TeamID)
		d := decision{msg: msgRef{Channel: channel, User: ic.User.ID}, thread: ic.Container.ThreadTs}
		p.bg.Go(func(ctx context.Context) {
			p.ephemeral(ctx, in, d, "Only members of this workspace can allow or deny what the agent asks. Nothing was answered.")
		})
		return nil
	case a.ActionID == actionAllow || a.ActionID == actionDeny:
		result := "allow"
		note = "✅ Allowed by <@" + ic.User.ID + ">"
		if a.ActionID == actionDeny {
			result, note = "deny", "🚫 Denied by <@"+ic.User.ID+">"
		}
		raw, _ := json.Marshal(core.ToolConfirmationBody{ToolUseID: v.ToolUse, Result: result, Message: "by Slack user " + ic.User.ID})
		input = core.NewInput(core.TypeUserToolConfirmation, raw)
	case a.ActionID == actionRetry:
		retry, err := core.NewRetry(s, v.Turn)
		if err != nil {
			log.Info("retry refused", "err", err)
			if _, _, thread, kerr := parseKey(s.Origin.Key); kerr == nil {
				p.tellThread(in, decision{msg: msgRef{Channel: channel, User: ic.User.ID}, thread: thread},
					"<@"+ic.User.ID+"> There is nothing to retry: "+strings.TrimSuffix(err.Error(), ": "+core.ErrConflict.Error())+".")
			}
			return nil
		}
		input, note = retry, "↻ Retried by <@"+ic.User.ID+">"
	default:
		return nil
	}
	// One click per button counts: a second click, or Slack retrying the
	// request, queues nothing.
	dedupe := []string{"slack:action:" + tenant + ":" + channel + ":" + msgTS + ":" + a.ActionID}
	if a.ActionID != actionStop && a.ActionID != actionRetry {
		// Any one answer (or allow/deny) settles a question.
		dedupe = []string{"slack:action:" + tenant + ":" + channel + ":" + msgTS + ":answer"}
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: core.Origin{Provider: Name, Key: s.Origin.Key},
		Input: input, Dedupe: dedupe, Continue: true})
	if err != nil || res.Outcome != providers.Queued {
		return err
	}
	if a.ActionID != actionStop {
		p.settle(in, channel, msgTS, ic.Message.Text, note)
	}
	return nil
}

// settle replaces a question's buttons with who answered, after the ack.
func (p *Provider) settle(in *core.Installation, channel, ts, text, note string) {
	p.bg.Go(func(ctx context.Context) {
		a, err := p.client(ctx, in)
		if err == nil {
			blocks := append(sections(text), slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, note, false, false)))
			err = a.update(ctx, channel, ts, slackapi.MsgOptionText(text, false), slackapi.MsgOptionBlocks(blocks...))
		}
		if err != nil {
			p.log.Warn("update an answered question", "channel", channel, "err", err)
		}
	})
}
