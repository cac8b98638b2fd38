package console

import "net/http"

func (h *Handler) registerEnvironments(mux *http.ServeMux) {}
