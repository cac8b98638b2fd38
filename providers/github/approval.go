package github

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// The check run's buttons that answer a tool call waiting for approval;
// a comment "@app allow" or "@app deny" answers it too.
const (
	allowAction = "allow"
	denyAction  = "deny"
)

// confirmationBody is a user.tool_confirmation from GitHub: the answer,
// and who gave it where, so the sink can mark the question answered.
type confirmationBody struct {
	core.ToolConfirmationBody
	GitHub *ref `json:"github,omitempty"`
}

// parseAnswer is "allow" or "deny" when a comment, its mention taken
// out, says only that; "" otherwise.
func parseAnswer(said string) string {
	switch s := strings.ToLower(strings.TrimRight(strings.TrimSpace(said), ".! ")); s {
	case allowAction, denyAction:
		return s
	}
	return ""
}

// callMarker hides the tool call a check run shows in its summary: a
// click's payload carries the run's output as it was clicked, so the
// answer goes to the call the person saw, never to one shown later.
func callMarker(toolUseID string) string { return "<!-- switchboard:call=" + toolUseID + " -->" }

var callMarkerRe = regexp.MustCompile(`<!-- switchboard:call=([A-Za-z0-9_-]+) -->`)

// shownCall is the tool call a check run's summary shows, or "".
func shownCall(summary string) string {
	if m := callMarkerRe.FindStringSubmatch(summary); m != nil {
		return m[1]
	}
	return ""
}

// refusedAnswer is why an answer from someone without write access is
// not taken.
func refusedAnswer(login string) string {
	return "Sorry @" + login + ", only people with write access to this repository can allow or deny what the agent asks. Nothing was answered."
}

// answer takes an allow or deny from someone with write access as the
// answer to the tool call the session waits on (the one a button's run
// showed, else the first one a person can answer): a
// user.tool_confirmation, queued once per call whatever the number of
// clicks, comments and deliveries, and never a message. A comment with
// nothing to answer is told so, once; a click on a run whose call was
// answered is only logged.
func (p *Provider) answer(ctx context.Context, in *core.Installation, d decision, delivery string, log *slog.Logger) error {
	// A comment is told at most once whatever its deliveries, and not at
	// all once it answered a call.
	once := delivery
	if d.ref.CommentID != 0 {
		once = "github:comment:" + d.ref.Kind + ":" + strconv.FormatInt(d.ref.CommentID, 10)
	}
	nothing := func(why string) error {
		log.Info("answer with nothing to answer", "login", d.ref.Login, "why", why)
		if d.act != actAnswer {
			p.replyOnce(d, once, "@"+d.ref.Login+" Nothing here is waiting for approval.")
		}
		return nil
	}
	s, err := p.cfg.Sessions.SessionByKey(ctx, d.key)
	if errors.Is(err, core.ErrNotFound) {
		return nothing("no session")
	}
	if err != nil {
		return err
	}
	id, err := p.waitingCall(ctx, s, d.toolUse)
	if err != nil {
		return err
	}
	if id == "" {
		return nothing("no call waits")
	}
	if d.act != actAnswer {
		if _, err := p.cfg.Installations.Once(ctx, replyKey(once, d), time.Now().Add(8*24*time.Hour)); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(confirmationBody{ToolConfirmationBody: core.ToolConfirmationBody{ToolUseID: id, Result: d.answer,
		Message: "by GitHub user " + d.ref.Login}, GitHub: &d.ref})
	if err != nil {
		return err
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: core.Origin{Provider: Name, Key: d.key},
		Input: core.NewInput(core.TypeUserToolConfirmation, raw), Continue: true, Actor: d.ref.Login,
		Dedupe: append(dedupeKeys(d, delivery), "github:answer:"+d.key+":"+id)})
	if err == nil && res.Outcome == providers.Queued {
		log.Info("tool call answered", "session_id", s.ID, "tool_use_id", id, "answer", d.answer, "login", d.ref.Login)
	}
	return err
}

// waitingCall is the tool call of s waiting for a person's approval that
// want names, or without want the first one; "" when none waits. Calls
// of custom tools wait for the application, not for a person.
func (p *Provider) waitingCall(ctx context.Context, s *core.Session, want string) (string, error) {
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
		if !custom[id] && (want == "" || id == want) {
			return id, nil
		}
	}
	return "", nil
}
