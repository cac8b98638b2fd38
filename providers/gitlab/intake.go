package gitlab

import "net/http"

// RegisterWebhooks mounts POST /webhooks/gitlab.
func (p *Provider) RegisterWebhooks(mux *http.ServeMux) {
	mux.HandleFunc("POST /webhooks/"+Name, p.serveWebhook)
}

func (p *Provider) serveWebhook(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusNotImplemented)
}
