package console

import "net/http"

func (h *Handler) registerSkills(mux *http.ServeMux) {}
