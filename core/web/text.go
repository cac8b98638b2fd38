package web

import (
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// CheckRequestText refuses, with a 400 naming the part, a request whose path or
// query values hold text no store could have kept as a key (invalid UTF-8,
// U+0000: core.CheckText). Ids, keys and filters come from there, so such
// a request can find nothing, and PostgreSQL would fail the look-up
// rather than find nothing.
func CheckRequestText(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := requestText(r); err != nil {
			WriteError(w, r, log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func requestText(r *http.Request) error {
	if err := core.CheckText("path", r.URL.Path); err != nil {
		return err
	}
	for name, values := range r.URL.Query() {
		for _, v := range append([]string{name}, values...) {
			if err := core.CheckText("query parameter "+name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
