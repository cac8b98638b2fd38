package console

import "net/http"

func (h *Handler) registerSession(mux *http.ServeMux) {}
