package record

import (
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
)

// HasLink reports whether key is one of the session's links.
func HasLink(sess *core.Session, key string) bool {
	return slices.ContainsFunc(sess.Links, func(l core.Link) bool { return l.Key == key })
}

// AddLink adds key to the session's links and returns the event that
// logs it. The store has checked that no other session holds the key.
func AddLink(sess *core.Session, l core.LinkBody, now core.Time) ([]LogEvent, error) {
	sess.Links = append(sess.Links, core.Link{Key: l.Key, AddedBy: l.By, AddedAt: now, URL: l.URL})
	return linkEvent(core.TypeLinkAdded, l)
}

// RemoveLink takes key out of the session's links and returns the event
// that logs it; ErrNotFound when it is not one of them.
func RemoveLink(sess *core.Session, key, by string) ([]LogEvent, error) {
	if !HasLink(sess, key) {
		return nil, fmt.Errorf("session %s has no link %q: %w", sess.ID, key, core.ErrNotFound)
	}
	sess.Links = slices.DeleteFunc(sess.Links, func(l core.Link) bool { return l.Key == key })
	if len(sess.Links) == 0 {
		sess.Links = nil
	}
	return linkEvent(core.TypeLinkRemoved, core.LinkBody{Key: key, By: by})
}

func linkEvent(typ string, l core.LinkBody) ([]LogEvent, error) {
	actor := core.ActorHuman
	if l.By == core.LinkedByAgent {
		actor = core.ActorAgent
	}
	return PrepareEvents([]core.Event{core.NewEvent(typ, core.LevelInternal, actor, l)})
}
