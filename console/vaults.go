package console

import "net/http"

func (h *Handler) registerVaults(mux *http.ServeMux) {}
