package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// formErrors are an API refusal as a form shows it.
type formErrors struct {
	// Fields holds a message under the field it names.
	Fields map[string]string
	// Form is a message above the form, when it names no field.
	Form string
}

// For is the message under field, "" when there is none.
func (e formErrors) For(field string) string { return e.Fields[field] }

// Any reports whether there is a message to show.
func (e formErrors) Any() bool { return e.Form != "" || len(e.Fields) > 0 }

// refusal turns an error of the in-process API into what a form shows: a
// refusal whose message names one of fields goes under that field, any
// other refusal above the form, with the API's status for the page. ok is
// false when err is not a refusal (the store failed: answer with
// h.failed).
func refusal(err error, fields ...string) (fe formErrors, status int, ok bool) {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status >= 500 {
		return fe, 0, false
	}
	if f := fieldOf(ae.Message, fields); f != "" {
		fe.Fields = map[string]string{f: ae.Message}
	} else {
		fe.Form = ae.Message
	}
	return fe, ae.Status, true
}

// fieldOf is the field among fields that msg is about: the API's
// messages say `field "name" …`, or start with the field's name
// (`model "x": …`, `tools[0]: …`).
func fieldOf(msg string, fields []string) string {
	for _, f := range fields {
		if strings.Contains(msg, `field "`+f+`"`) {
			return f
		}
	}
	for _, f := range fields {
		if rest, ok := strings.CutPrefix(msg, f); ok && rest != "" && strings.ContainsRune(" :[\".=", rune(rest[0])) {
			return f
		}
	}
	return ""
}

// done answers a form that succeeded: a redirect (303) to target, a
// console address relative to its root, so reloading the page that
// follows posts nothing again.
func done(w http.ResponseWriter, r *http.Request, target string) {
	seeOther(w, relative(r, target))
}

// apiFailed answers an API call that failed outside a form: a refusal
// (the thing is not there, say) is a page with the API's message at its
// status; anything else is h.failed.
func (h *Handler) apiFailed(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, what string, err error) {
	fe, status, ok := refusal(err)
	if !ok {
		h.failed(w, r, s, what, err)
		return
	}
	heading := "Not found"
	if status != http.StatusNotFound {
		heading = "Could not " + what
	}
	h.message(w, r, s, status, heading, fe.Form)
}
