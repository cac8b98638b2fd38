package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

type linkBody struct {
	Key string `json:"key"`
}

// addLink routes another origin key to the session: a trigger there
// steers it. The key must be of the session's installation or one in its
// tenant group.
func (h *Handler) addLink(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b linkBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	if b.Key == "" {
		return web.Invalid("field \"key\" is required: an origin key, <provider>:<the platform's address of the thread>")
	}
	if _, err := core.KeyProvider(b.Key); err != nil {
		return fmt.Errorf("field \"key\": %w", err)
	}
	s, err := h.session(r)
	if err != nil {
		return err
	}
	if h.Links == nil {
		return web.Invalid("field \"key\": no platform is configured here to link to")
	}
	if err := h.Links.CheckLink(r.Context(), s, b.Key); errors.Is(err, core.ErrInvalid) {
		return fmt.Errorf("field \"key\": %w", err)
	} else if err != nil {
		return err
	}
	if s, err = h.Store.AddLink(background(r), s.ID, core.LinkBody{Key: b.Key, By: core.LinkedByAdmin}); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ViewSession(s))
	return nil
}

// removeLink stops routing ?key= to the session (a query parameter: keys
// hold / and #).
func (h *Handler) removeLink(w http.ResponseWriter, r *http.Request) error {
	key := r.URL.Query().Get("key")
	if key == "" {
		return web.Invalid("query parameter \"key\" is required: the link's key, URL-encoded")
	}
	s, err := h.session(r)
	if err != nil {
		return err
	}
	if s, err = h.Store.RemoveLink(background(r), s.ID, key, core.LinkedByAdmin); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ViewSession(s))
	return nil
}
