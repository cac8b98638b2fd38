package console

import "net/http"

func (h *Handler) registerAgents(mux *http.ServeMux) {}
