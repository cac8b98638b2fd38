package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// AttachTokenIssuer makes a session's attach token for a person
// (api.Issuer): its secret, which is not kept, and the token.
type AttachTokenIssuer interface {
	IssueAttachToken(ctx context.Context, sessionID, person, personID, by string) (string, *core.AttachToken, error)
}

// editor answers the editor command: to a platform that answers the
// asker privately (Trigger.Private), an attach token naming them and the
// command line for their editor; elsewhere, where anyone in the thread
// would read a token, where to get one.
func (r *Intake) editor(ctx context.Context, t Trigger, log *slog.Logger) (Routed, error) {
	// A platform may deliver the command twice (as two events of one
	// message, and again on a retry): only the first is answered, so one
	// token is made.
	if seen, err := r.claim(ctx, t.Dedupe); err != nil {
		return Routed{}, fmt.Errorf("route %s: %w", t.Origin.Key, err)
	} else if seen {
		log.Debug("the editor command was delivered before; answered once")
		return Routed{Outcome: Duplicate}, nil
	}
	s, err := r.Store.SessionByKey(ctx, t.Origin.Key)
	if errors.Is(err, core.ErrNotFound) {
		return Routed{Outcome: EditorAnswered, Note: "There is no session here to open in an editor yet: mention me with a task first."}, nil
	}
	if err != nil {
		return Routed{}, fmt.Errorf("route %s: %w", t.Origin.Key, err)
	}
	if s.Status == core.StatusArchived {
		return Routed{Outcome: Archived, Session: s}, nil
	}
	where := r.sessionConsole(s.ID)
	if t.Guest {
		log.Info("editor command from a guest of another workspace refused", "actor", t.Actor)
		return Routed{Outcome: EditorAnswered, Session: s, Note: "Only members of this workspace can open this session in an editor: no token was made for you."}, nil
	}
	if !t.Private || r.AttachTokens == nil || t.Actor == "" {
		return Routed{Outcome: EditorAnswered, Session: s, Note: "To follow and continue this session from your editor (`switchboard acp`), " +
			"ask an admin for an attach token naming you: in the console's session page" + where +
			", or with `switchboard session attach-token create " + s.ID + " --person NAME`. " +
			"A token is never posted here, where everyone in the thread would read it."}, nil
	}
	person := t.Person
	if person == "" {
		person = t.Actor
	}
	by := t.Origin.Provider + ":" + t.Actor
	secret, tok, err := r.AttachTokens.IssueAttachToken(ctx, s.ID, person, t.Actor, by)
	if errors.Is(err, core.ErrArchived) {
		return Routed{Outcome: Archived, Session: s}, nil
	}
	if err != nil {
		return Routed{}, fmt.Errorf("route %s: attach token: %w", t.Origin.Key, err)
	}
	log.Info("attach token issued from the thread", "session_id", s.ID, "attach_token", tok.ID, "actor", t.Actor)
	note := strings.Join([]string{
		"Only you can see this. To follow and continue this session from your editor, run the agent `switchboard acp` with this token (it names you, " + person + "):",
		"```" + "SWITCHBOARD_TOKEN=" + secret + " switchboard acp --url " + r.PublicURL + "```",
		"What you send from your editor is posted here as yours. An admin can revoke the token (" + tok.ID + ") in the console" + where + ".",
	}, "\n")
	return Routed{Outcome: EditorAnswered, Session: s, Note: note}, nil
}

// dedupeFor is how long a command's delivery keys are remembered: longer
// than any platform retries.
const dedupeFor = 8 * 24 * time.Hour

// claim records a command's dedupe keys and reports whether any was
// claimed before.
func (r *Intake) claim(ctx context.Context, keys []string) (bool, error) {
	seen := false
	for _, k := range keys {
		fresh, err := r.Store.Once(ctx, "intake:command:"+k, time.Now().Add(dedupeFor))
		if err != nil {
			return false, fmt.Errorf("dedupe: %w", err)
		}
		seen = seen || !fresh
	}
	return seen, nil
}

// sessionConsole is " (<address>)" of the session's console page, or ""
// when the gateway's address is not known.
func (r *Intake) sessionConsole(id string) string {
	if r.PublicURL == "" {
		return ""
	}
	return " (" + strings.TrimRight(r.PublicURL, "/") + "/console/sessions/" + id + ")"
}
