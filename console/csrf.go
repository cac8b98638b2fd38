package console

import (
	"crypto/subtle"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// formLimit bounds a console form's body: they hold a few short fields.
const formLimit = 64 << 10

// checkCSRF reports whether r's form carries s's CSRF token (field
// "csrf"). The cookie is SameSite=Strict already; the token also stops a
// request forged from a sibling subdomain, which counts as same-site.
func (h *Handler) checkCSRF(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) bool {
	r.Body = http.MaxBytesReader(w, r.Body, formLimit)
	if err := r.ParseForm(); err != nil {
		return false
	}
	got := r.PostForm.Get("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}
