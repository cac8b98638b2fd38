package editor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Gateway is the part of the API client the editor uses.
type Gateway interface {
	CreateSession(ctx context.Context, p client.SessionParams) (*client.CreatedSession, error)
	GetSession(ctx context.Context, id string) (*client.SessionView, error)
	ListSessions(ctx context.Context, f client.SessionFilter) (*web.Page[client.SessionView], error)
	Events(ctx context.Context, id string, q client.EventsQuery) (*web.Page[core.Event], error)
	Follow(ctx context.Context, id string, after uint64, level string, fn func(core.Event) error) error
	SendEvents(ctx context.Context, id string, inputs []client.Input, idempotencyKey string) ([]client.QueuedInput, error)
	Pending(ctx context.Context, id string) ([]core.Event, error)
}

// JSON-RPC error codes beyond the SDK's constructors: ACP's
// "authentication required" and "resource not found".
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeAuthRequired   = -32000
	codeNotFound       = -32002
	codeInternal       = -32603
)

// rpcError turns a failed API call into a JSON-RPC error whose message
// says what failed and what to do; what names the call ("load session
// ses_1").
func (a *agent) rpcError(what string, err error) error {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return &acp.RequestError{Code: codeInternal, Message: fmt.Sprintf("%s: cannot reach the gateway at %s: %v (is switchboard serve running there? point at it with --url or SWITCHBOARD_URL)", what, a.o.URL, err)}
	}
	switch ae.Status {
	case http.StatusUnauthorized:
		return &acp.RequestError{Code: codeAuthRequired, Message: fmt.Sprintf("%s: the gateway refused the token: %s (pass --token or set SWITCHBOARD_TOKEN)", what, ae.Message)}
	case http.StatusForbidden:
		return &acp.RequestError{Code: codeAuthRequired, Message: fmt.Sprintf("%s: this token may not do that: %s", what, ae.Message)}
	case http.StatusNotFound:
		return &acp.RequestError{Code: codeNotFound, Message: fmt.Sprintf("%s: %s", what, ae.Message)}
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge:
		return &acp.RequestError{Code: codeInvalidParams, Message: fmt.Sprintf("%s: %s", what, ae.Message)}
	}
	return &acp.RequestError{Code: codeInternal, Message: fmt.Sprintf("%s: the gateway answered %d: %s", what, ae.Status, ae.Message)}
}

// message is err's text for a person: a JSON-RPC error's message alone.
func message(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
