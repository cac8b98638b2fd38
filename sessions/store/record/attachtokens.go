package record

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// NewAttachToken checks a token to create and stamps its time; the
// event returned logs it.
func NewAttachToken(t core.AttachToken, now core.Time) (*core.AttachToken, []LogEvent, error) {
	if err := core.CheckPerson(t.Person); err != nil {
		return nil, nil, err
	}
	switch {
	case !core.HasPrefix(t.ID, core.PrefixAttachToken):
		return nil, nil, fmt.Errorf("attach token id %q: want %s_…: %w", t.ID, core.PrefixAttachToken, core.ErrInvalid)
	case t.Hash == "":
		return nil, nil, fmt.Errorf("attach token %s: no hash: %w", t.ID, core.ErrInvalid)
	case t.IssuedBy == "":
		return nil, nil, fmt.Errorf("attach token %s: no issuer: %w", t.ID, core.ErrInvalid)
	}
	t.CreatedAt, t.RevokedAt, t.RevokedBy, t.LastUsedAt = now, nil, "", nil
	events, err := attachTokenEvent(core.TypeAttachTokenCreated, &t, t.IssuedBy)
	return &t, events, err
}

// RevokeAttachToken marks t revoked by by at now and returns the event
// that logs it; nil events when it was revoked already.
func RevokeAttachToken(t *core.AttachToken, by string, now core.Time) ([]LogEvent, error) {
	if t.Revoked() {
		return nil, nil
	}
	t.RevokedAt, t.RevokedBy = now.Ptr(), by
	return attachTokenEvent(core.TypeAttachTokenRevoked, t, by)
}

func attachTokenEvent(typ string, t *core.AttachToken, by string) ([]LogEvent, error) {
	return PrepareEvents([]core.Event{core.NewEvent(typ, core.LevelInternal, core.ActorHuman, core.AttachTokenBody{ID: t.ID, Person: t.Person, By: by})})
}

// DecodeAttachToken reads a stored token.
func DecodeAttachToken(raw []byte) (*core.AttachToken, error) {
	return Decode[core.AttachToken]("attach token", raw)
}
