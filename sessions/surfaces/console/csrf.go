package console

import (
	"crypto/subtle"
	"mime"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// formLimit bounds a console form's body: they hold a few short fields.
const formLimit = 64 << 10

// checkCSRF reports whether r's form carries s's CSRF token (field
// "csrf"). The cookie is SameSite=Strict already; the token also stops a
// request forged from a sibling subdomain, which counts as same-site.
func (h *Handler) checkCSRF(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		// An upload (a skill's files): bounded by the upload limit, its
		// files kept in memory up to formLimit and spilled to disk past it.
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxUpload)
		if err := r.ParseMultipartForm(formLimit); err != nil {
			return false
		}
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, formLimit)
		if err := r.ParseForm(); err != nil {
			return false
		}
	}
	got := r.PostForm.Get("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}
