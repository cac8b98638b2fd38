package core

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PrefixAttachToken is the id prefix of attach tokens.
const PrefixAttachToken = "atk"

// The events that record a session's attach tokens (internal level).
const (
	TypeAttachTokenCreated = "session.attach_token_created"
	TypeAttachTokenRevoked = "session.attach_token_revoked"
)

// ViaEditor is the Via of an input posted with an attach token: a person
// continued the session from their editor.
const ViaEditor = "editor"

// AttachToken lets one person read and steer one session from their
// editor, until it is revoked. Only a hash of its secret is kept.
type AttachToken struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	// Person is the name the token is for: inputs posted with it say
	// they are theirs, and the thread is told so.
	Person string `json:"person"`
	// PersonID is the person's identity where one is known (a platform's
	// user id), empty otherwise.
	PersonID string `json:"person_id,omitempty"`
	// IssuedBy says who made it: "admin", or the identity of the person
	// who asked for it in the thread.
	IssuedBy   string `json:"issued_by"`
	CreatedAt  Time   `json:"created_at"`
	RevokedAt  *Time  `json:"revoked_at"`
	RevokedBy  string `json:"revoked_by,omitempty"`
	LastUsedAt *Time  `json:"last_used_at"`
	// Hash is the hex sha256 of the token; set by the caller, never shown.
	Hash string `json:"hash,omitempty"`
}

// Revoked reports whether the token was revoked.
func (t *AttachToken) Revoked() bool { return t.RevokedAt != nil }

// IssuedByAdmin is AttachToken.IssuedBy for tokens made with the admin
// token (the API, the console, the CLI).
const IssuedByAdmin = "admin"

// AttachTokenBody is the body of session.attach_token_created and
// session.attach_token_revoked.
type AttachTokenBody struct {
	ID     string `json:"id"`
	Person string `json:"person"`
	By     string `json:"by"`
}

// MaxPersonName bounds an attach token's person, in bytes.
const MaxPersonName = 200

// CheckPerson refuses a person's name that is empty, too long, or holds
// control characters (it is shown in threads and logs).
func CheckPerson(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("field \"person\": want the name of the person the token is for: %w", ErrInvalid)
	case len(name) > MaxPersonName || !utf8.ValidString(name):
		return fmt.Errorf("field \"person\": want valid text of at most %d bytes: %w", MaxPersonName, ErrInvalid)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("field \"person\": control characters are not allowed: %w", ErrInvalid)
	}
	return nil
}

// AttachTokenStore keeps sessions' attach tokens.
type AttachTokenStore interface {
	// CreateAttachToken saves t (ID, SessionID, Person, IssuedBy and Hash
	// set by the caller) and logs session.attach_token_created in the same
	// transaction: ErrNotFound without the session, ErrArchived when it
	// is archived, ErrInvalid for a bad person or a missing hash.
	CreateAttachToken(ctx context.Context, t AttachToken) (*AttachToken, error)
	// GetAttachToken returns a token, revoked or not; ErrNotFound.
	GetAttachToken(ctx context.Context, id string) (*AttachToken, error)
	// ListAttachTokens returns a session's tokens, oldest first;
	// ErrNotFound without the session.
	ListAttachTokens(ctx context.Context, sessionID string) ([]*AttachToken, error)
	// RevokeAttachToken revokes one of the session's tokens and logs
	// session.attach_token_revoked (not on an archived session, whose log
	// is closed); revoking a revoked token changes nothing. ErrNotFound
	// when the session has no such token.
	RevokeAttachToken(ctx context.Context, sessionID, id, by string) (*AttachToken, error)
	// TouchAttachToken records that the token was used at at.
	TouchAttachToken(ctx context.Context, id string, at Time) error
}
