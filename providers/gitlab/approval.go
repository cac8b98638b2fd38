package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// confirmationBody is a user.tool_confirmation from GitLab: the answer,
// and who gave it where.
type confirmationBody struct {
	core.ToolConfirmationBody
	GitLab *ref `json:"gitlab,omitempty"`
}

// answer takes "@app allow" or "@app deny" from a Developer or above as
// the answer to the first tool call the session waits on for a person: a
// user.tool_confirmation naming who answered, queued once per call
// whatever the number of notes and deliveries. A note with nothing to
// answer is told so, once.
func (p *Provider) answer(ctx context.Context, in *core.Installation, d decision, keys []string, log *slog.Logger) error {
	nothing := func(why string) error {
		log.Info("answer with nothing to answer", "username", d.ref.Username, "why", why)
		p.replyOnce(d, "@"+d.ref.Username+" Nothing here is waiting for approval.")
		return nil
	}
	s, err := p.cfg.Sessions.SessionByKey(ctx, d.key)
	if errors.Is(err, core.ErrNotFound) {
		return nothing("no session")
	}
	if err != nil {
		return err
	}
	id, err := p.waitingCall(ctx, s)
	if err != nil {
		return err
	}
	if id == "" {
		return nothing("no call waits")
	}
	raw, err := json.Marshal(confirmationBody{ToolConfirmationBody: core.ToolConfirmationBody{ToolUseID: id, Result: d.answer,
		Message: "by GitLab user " + d.ref.Username}, GitLab: &d.ref})
	if err != nil {
		return err
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: core.Origin{Provider: Name, Key: d.key},
		Input: core.NewInput(core.TypeUserToolConfirmation, raw), Continue: true, Actor: d.ref.Username,
		Dedupe: append(keys, Name+":answer:"+d.key+":"+id)})
	if err == nil && res.Outcome == providers.Queued {
		log.Info("tool call answered", "session_id", s.ID, "tool_use_id", id, "answer", d.answer, "username", d.ref.Username)
	}
	return err
}

// waitingCall is the first tool call of s waiting for a person's
// approval, "" when none waits. Calls of custom tools wait for the
// application, not for a person.
func (p *Provider) waitingCall(ctx context.Context, s *core.Session) (string, error) {
	if s.PendingAction == nil || s.PendingAction.Budget != nil || len(s.PendingAction.ToolUseIDs) == 0 {
		return "", nil
	}
	evs, err := p.cfg.Sessions.Events(ctx, s.ID, 0, 0)
	if err != nil {
		return "", err
	}
	custom := map[string]bool{}
	for _, e := range evs {
		var b core.ToolUseBody
		if e.Type == core.TypeAgentCustomToolUse && e.Decode(&b) == nil {
			custom[b.ToolUseID] = true
		}
	}
	for _, id := range s.PendingAction.ToolUseIDs {
		if !custom[id] {
			return id, nil
		}
	}
	return "", nil
}
