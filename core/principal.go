package core

import "context"

// Principal is who a request acts as: the admin, or a session's client
// token or attach token, which may only read and steer its own session.
type Principal struct {
	Admin     bool
	SessionID string // set for a client token and an attach token
	// AttachToken and Person are set for an attach token: its id, and
	// the person it names.
	AttachToken string
	Person      string
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the request's principal; ok is false when the
// request was not authenticated.
func PrincipalFrom(ctx context.Context) (p Principal, ok bool) {
	p, ok = ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// MaySee reports whether p may read and steer session id.
func (p Principal) MaySee(id string) bool { return p.Admin || (p.SessionID != "" && p.SessionID == id) }
