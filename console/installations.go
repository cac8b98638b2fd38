package console

import "net/http"

func (h *Handler) registerInstallations(mux *http.ServeMux) {}
