package api

import (
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

type forkBody struct {
	AtSeq uint64 `json:"at_seq"`
}

// fork makes a new session with the path's session's log up to at_seq,
// which must end a turn (default: the end of its last completed turn);
// the answer carries the fork's own client token.
func (h *Handler) fork(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b forkBody
	if len(raw) > 0 {
		if err := web.Decode(raw, &b); err != nil {
			return err
		}
	}
	src, err := h.session(r)
	if err != nil {
		return err
	}
	id := core.NewID(core.PrefixSession)
	token, hash := NewClientToken(id)
	s, err := h.Store.ForkSession(background(r), core.Fork{From: src.ID, AtSeq: b.AtSeq, Session: core.Session{ID: id, ClientTokenHash: hash}})
	if err != nil {
		return err
	}
	h.Logger.Info("session forked", "session_id", s.ID, "from", src.ID, "seq", s.ForkedFrom.Seq)
	web.WriteJSON(w, http.StatusCreated, CreatedSession{ID: s.ID, Status: s.Status, Agent: s.Agent, ClientToken: token, Metadata: s.Metadata,
		Environment: s.Environment, Tenant: s.MemoryTenant(), CreatedAt: s.CreatedAt, ForkedFrom: s.ForkedFrom})
	return nil
}
