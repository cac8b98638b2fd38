package console

import "net/http"

func (h *Handler) registerMemory(mux *http.ServeMux) {}
