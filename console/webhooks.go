package console

import "net/http"

func (h *Handler) registerWebhooks(mux *http.ServeMux) {}
