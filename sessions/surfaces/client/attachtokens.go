package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// AttachToken is an attach token as the API shows it; Token is set only
// in CreateAttachToken's answer.
type AttachToken = api.AttachTokenView

// AttachTokenParams name the person a new attach token is for.
type AttachTokenParams struct {
	Person   string `json:"person"`
	PersonID string `json:"person_id,omitempty"`
}

// CreateAttachToken makes an attach token of session id for a person
// (admin). Its Token is shown only here.
func (c *Client) CreateAttachToken(ctx context.Context, id string, p AttachTokenParams) (*AttachToken, error) {
	var out AttachToken
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s/", id) + "attach_tokens", body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAttachTokens lists session id's attach tokens, revoked ones
// included (admin).
func (c *Client) ListAttachTokens(ctx context.Context, id string) ([]AttachToken, error) {
	var out web.Page[AttachToken]
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/sessions/%s/", id) + "attach_tokens"}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// RevokeAttachToken revokes one of session id's attach tokens (admin):
// requests with it are refused from now on, and streams it opened end.
func (c *Client) RevokeAttachToken(ctx context.Context, id, tokenID string) (*AttachToken, error) {
	var out AttachToken
	if err := c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/sessions/%s/attach_tokens/%s", id, tokenID)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TokenSession returns the session a client token or an attach token is
// for, read from the token itself: no request is made.
func TokenSession(token string) (string, bool) { return api.TokenSession(token) }

// AttachCommand is the command line that opens a session in an editor
// with an attach token (switchboard acp against the server at baseURL).
func AttachCommand(baseURL, token string) string { return api.AttachCommand(baseURL, token) }
