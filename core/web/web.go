// Package web holds the HTTP conventions every switchboard API handler
// shares: handlers return an error, one wrapper turns it into the JSON
// error {"error":{"type","message"}} (docs/api.md), bodies are
// size-limited and decoded strictly.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Error is an API error with its status and type.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an Error.
func Errorf(status int, typ, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 invalid_request.
func Invalid(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, "invalid_request", format, args...)
}

// Handler is an http handler that returns its error.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Wrap turns a Handler into an http.Handler that writes errors as JSON.
func Wrap(log *slog.Logger, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			WriteError(w, r, log, err)
		}
	})
}

// WriteError writes err as the API's JSON error.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := classify(err)
	if e.Status >= 500 && log != nil {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	WriteJSON(w, e.Status, map[string]any{"error": map[string]string{"type": e.Type, "message": e.Message}})
}

func classify(err error) *Error {
	var we *Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &we):
		return we
	case errors.As(err, &mbe):
		return Errorf(http.StatusRequestEntityTooLarge, "payload_too_large", "request body is larger than %d bytes", mbe.Limit)
	}
	for _, m := range sentinels {
		if errors.Is(err, m.err) {
			msg := err.Error()
			if m.repeats {
				// "invalid request", "conflict" and "forbidden" only repeat
				// the type.
				msg = strings.TrimSuffix(msg, ": "+m.err.Error())
			}
			return Errorf(m.status, m.typ, "%s", msg)
		}
	}
	return Errorf(http.StatusInternalServerError, "internal", "internal error")
}

// sentinels map core's errors to statuses, most specific first.
var sentinels = []struct {
	err    error
	status int
	typ    string
	// repeats: the sentinel's words at the end of a message say no more
	// than the type; a "not found" says what is missing.
	repeats bool
}{
	{core.ErrUnauthorized, http.StatusUnauthorized, "unauthorized", false},
	{core.ErrForbidden, http.StatusForbidden, "forbidden", true},
	{core.ErrNotFound, http.StatusNotFound, "not_found", false},
	{core.ErrConflict, http.StatusConflict, "conflict", true},
	{core.ErrArchived, http.StatusConflict, "conflict", false},
	{core.ErrInvalid, http.StatusBadRequest, "invalid_request", true},
}

// WriteJSON writes v with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ReadBody reads at most max bytes of the request body.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, Invalid("read body: %v", err)
	}
	return b, nil
}

// Decode unmarshals body into v strictly: one JSON value, no unknown fields.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return Invalid("request body is empty: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalid("%s", describe(err))
	}
	if dec.More() {
		return Invalid("request body has data after the JSON value")
	}
	return nil
}

// describe turns a decoding error into a message that names the problem.
func describe(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %q: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("want %s, got %s", te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return msg
}

// Page is the shape of every list answer.
type Page[T any] struct {
	Data    []T  `json:"data"`
	HasMore bool `json:"has_more"`
	// Next, when set, is the after of the next page; lists without it
	// go on after their last item's id.
	Next string `json:"next,omitempty"`
	// Capped says a search stopped at its bound of records read before
	// it filled the page: the next page goes on from Next.
	Capped bool `json:"capped,omitempty"`
}

// List answers a list endpoint with a page of list's answer for the
// request's after and limit, an empty page as [].
func List[T any](w http.ResponseWriter, r *http.Request, list func(ctx context.Context, after string, limit int) ([]T, bool, error)) error {
	limit, err := Limit(r)
	if err != nil {
		return err
	}
	data, more, err := list(r.Context(), r.URL.Query().Get("after"), limit)
	if err != nil {
		return err
	}
	if data == nil {
		data = []T{}
	}
	WriteJSON(w, http.StatusOK, Page[T]{Data: data, HasMore: more})
	return nil
}

// Limit parses the limit query parameter: default 100, at most 1000.
func Limit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return 0, Invalid("limit=%q: want a whole number from 1 to 1000", s)
	}
	return n, nil
}

// AdminOnly refuses requests that do not carry the admin principal: a
// session's client token with a 401, an attach token with a 403.
func AdminOnly(fn Handler) Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, ok := core.PrincipalFrom(r.Context())
		switch {
		case ok && p.AttachToken != "":
			return OwnSessionOnly(p)
		case !ok || !p.Admin:
			return Errorf(http.StatusUnauthorized, "unauthorized", "this endpoint needs the admin token")
		}
		return fn(w, r)
	}
}

// OwnSessionOnly is the 403 of an attach token used beyond its session.
func OwnSessionOnly(p core.Principal) error {
	return Errorf(http.StatusForbidden, "forbidden", "an attach token may only read and steer its own session (%s)", p.SessionID)
}

// NotFound turns the store's not-found into a 404 naming the path's
// record ("vault \"vlt_…\" not found"), and passes other errors on.
func NotFound(err error, kind, id string) error {
	if errors.Is(err, core.ErrNotFound) {
		return Errorf(http.StatusNotFound, "not_found", "%s %q not found", kind, id)
	}
	return err
}

// AdminRoutes mounts admin-only handlers on mux, each wrapped to answer
// its error as JSON.
func AdminRoutes(mux *http.ServeMux, log *slog.Logger) func(pattern string, fn Handler) {
	return func(pattern string, fn Handler) { mux.Handle(pattern, Wrap(log, AdminOnly(fn))) }
}
