package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// continueAt links the trigger's key to the session at t.ContinueURL, so
// what is written here steers it: only when both places are of one
// installation or tenant group, and the person may trigger the agent
// there too. Every refusal says why.
func (r *Intake) continueAt(ctx context.Context, t Trigger, log *slog.Logger) (Routed, error) {
	refuse := func(format string, args ...any) (Routed, error) {
		note := fmt.Sprintf(format, args...)
		log.Info("continue refused", "url", t.ContinueURL, "actor", t.Actor, "why", note)
		return Routed{Outcome: LinkRefused, Note: note}, nil
	}
	if r.Links == nil || t.Installation == nil {
		return refuse("I can't link this thread to another place here.")
	}
	key, err := r.Links.KeyOfURL(ctx, t.ContinueURL)
	if errors.Is(err, core.ErrInvalid) {
		return refuse("I can only continue %s that I work in: %s is not one.", r.Links.Threads(), t.ContinueURL)
	}
	if err != nil {
		return Routed{}, err
	}
	target, err := r.Store.SessionByKey(ctx, key)
	if errors.Is(err, core.ErrNotFound) {
		return refuse("There is no session of mine at %s to continue.", t.ContinueURL)
	}
	if err != nil {
		return Routed{}, err
	}
	if own, err := r.Store.SessionByKey(ctx, t.Origin.Key); err == nil {
		if own.ID == target.ID {
			return Routed{Outcome: Linked, Session: own, Note: "This thread already continues that session."}, nil
		}
		return refuse("This thread has a session of its own already; write `continue %s` in a new thread.", t.ContinueURL)
	} else if !errors.Is(err, core.ErrNotFound) {
		return Routed{}, err
	}
	if target.Origin == nil {
		return refuse("The session at %s was started over the API; an admin can link it.", t.ContinueURL)
	}
	to, err := r.Links.InstallationOfKey(ctx, target.Origin.Key)
	if errors.Is(err, core.ErrInvalid) {
		return refuse("The session at %s belongs to no installation I serve.", t.ContinueURL)
	}
	if err != nil {
		return Routed{}, err
	}
	if !AllowsLink(t.Installation, to) {
		return refuse("I can't: that session belongs to another installation (%s %s), which is not in a tenant group with this one. An admin can put both in one `tenant_group`.",
			to.Provider, nameOf(to))
	}
	if users := to.Policy.Users; len(users) > 0 && (to.Provider != t.Installation.Provider || !slices.Contains(users, t.Actor)) {
		return refuse("I can't: only some people may ask me for work at %s, and you are not among them there.", t.ContinueURL)
	}
	s, err := r.Store.AddLink(ctx, target.ID, core.LinkBody{Key: t.Origin.Key, By: t.Actor})
	if errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrArchived) {
		return refuse("I can't link this thread: %s.", strings.TrimSuffix(err.Error(), ": "+core.ErrConflict.Error()))
	}
	if err != nil {
		return Routed{}, err
	}
	log.Info("thread linked to a session", "session_id", s.ID, "actor", t.Actor)
	return Routed{Outcome: Linked, Session: s, Note: fmt.Sprintf("This thread now continues the session at %s: what you write here reaches it.", t.ContinueURL)}, nil
}

func nameOf(in *core.Installation) string {
	if in.Name != "" {
		return in.Name
	}
	return in.ExternalID
}
