package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ScopeType says who owns a vault credential.
type ScopeType string

const (
	// ScopeGlobal credentials are the admin's: any session may use them.
	// Credentials stored before scopes existed are global.
	ScopeGlobal ScopeType = "global"
	// ScopeTenant credentials belong to one tenant (a session's Tenant:
	// "slack:T0123", "github:acme/app", an API session's tenant).
	ScopeTenant ScopeType = "tenant"
	// ScopeTenantGroup credentials belong to the installations an admin
	// put in one tenant group (Installation.TenantGroup).
	ScopeTenantGroup ScopeType = "tenant_group"
)

// maxScopeName bounds a scope's tenant or tenant group.
const maxScopeName = 128

// CredentialScope is a credential's owner: which sessions may use it.
// The zero value is global.
type CredentialScope struct {
	Type        ScopeType `json:"type"`
	Tenant      string    `json:"tenant,omitempty"`
	TenantGroup string    `json:"tenant_group,omitempty"`
}

// GlobalScope is the scope of an admin's credential.
var GlobalScope = CredentialScope{Type: ScopeGlobal}

// IsGlobal reports whether any session may use the credential.
func (s CredentialScope) IsGlobal() bool { return s.Type == "" || s.Type == ScopeGlobal }

// Normal is s with an empty type spelled out as global.
func (s CredentialScope) Normal() CredentialScope {
	if s.Type == "" {
		s.Type = ScopeGlobal
	}
	return s
}

// String names the scope in messages: "global", "tenant slack:T0123",
// "tenant group acme".
func (s CredentialScope) String() string {
	switch s.Type {
	case "", ScopeGlobal:
		return "global"
	case ScopeTenant:
		return "tenant " + s.Tenant
	case ScopeTenantGroup:
		return "tenant group " + s.TenantGroup
	}
	return string(s.Type)
}

// Validate checks that the scope names exactly what its type needs.
func (s CredentialScope) Validate() error {
	name := func(field, v string) error {
		if v == "" || strings.TrimSpace(v) != v || !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxScopeName {
			return fmt.Errorf("field \"scope.%s\": want 1 to %d characters of valid UTF-8, without spaces around: %w", field, maxScopeName, ErrInvalid)
		}
		return nil
	}
	switch s.Type {
	case "", ScopeGlobal:
		if s.Tenant != "" || s.TenantGroup != "" {
			return fmt.Errorf("field \"scope\": a global credential names no tenant or tenant group: %w", ErrInvalid)
		}
	case ScopeTenant:
		if s.TenantGroup != "" {
			return fmt.Errorf("field \"scope.tenant_group\" is for type %q, not %q: %w", ScopeTenantGroup, ScopeTenant, ErrInvalid)
		}
		return name("tenant", s.Tenant)
	case ScopeTenantGroup:
		if s.Tenant != "" {
			return fmt.Errorf("field \"scope.tenant\" is for type %q, not %q: %w", ScopeTenant, ScopeTenantGroup, ErrInvalid)
		}
		return name("tenant_group", s.TenantGroup)
	default:
		return fmt.Errorf("field \"scope.type\": unknown type %q: want global, tenant or tenant_group: %w", s.Type, ErrInvalid)
	}
	return nil
}

// Tenancy is what a session uses credentials as: its tenant and the
// tenant groups that tenant is in. Agents have none: a credential is
// judged by the session that uses it.
type Tenancy struct {
	Session string
	Tenant  string
	Groups  []string
}

// String describes the tenancy in messages.
func (t Tenancy) String() string {
	if t.Session == "" {
		return "no session"
	}
	s := "session " + t.Session + " (tenant " + t.Tenant
	if len(t.Groups) > 0 {
		s += ", tenant group " + strings.Join(t.Groups, ", ")
	} else {
		s += ", in no tenant group"
	}
	return s + ")"
}

// Permits reports whether a session of tenancy t may use a credential of
// scope s.
func (s CredentialScope) Permits(t Tenancy) bool {
	switch s.Type {
	case "", ScopeGlobal:
		return true
	case ScopeTenant:
		return t.Tenant != "" && s.Tenant == t.Tenant
	case ScopeTenantGroup:
		return s.TenantGroup != "" && slices.Contains(t.Groups, s.TenantGroup)
	}
	return false
}

// ScopeError refuses a credential to a session it does not belong to
// (or to a use on behalf of no session). It is ErrForbidden.
type ScopeError struct {
	Credential string // its id
	Name       string
	Scope      CredentialScope
	Tenancy    Tenancy
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("credential %s (%s) is scoped to %s: %s may not use it", e.Credential, e.Name, e.Scope, e.Tenancy)
}

// Is makes a ScopeError ErrForbidden.
func (e *ScopeError) Is(target error) bool { return target == ErrForbidden }

// CheckCredentialUse refuses, with a *ScopeError naming the credential,
// its scope and the session's tenancy, a credential the session may not
// use.
func CheckCredentialUse(c *Credential, t Tenancy) error {
	if t.Session != "" && c.Scope.Permits(t) {
		return nil
	}
	if c.Scope.IsGlobal() {
		return nil
	}
	return &ScopeError{Credential: c.ID, Name: c.Name, Scope: c.Scope, Tenancy: t}
}

// credentialSessionKey carries the session a credential is resolved for.
type credentialSessionKey struct{}

// WithCredentialSession marks ctx as resolving credentials on behalf of
// session id: a credential source refuses a scoped credential that
// session may not use, and every scoped credential without one.
func WithCredentialSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, credentialSessionKey{}, id)
}

// CredentialSessionFrom is the session ctx resolves credentials for, ""
// when none.
func CredentialSessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(credentialSessionKey{}).(string)
	return id
}

// ParseCredentialScope reads a scope as a person types one (the console's
// Owner field, the command line's --scope): "global", "tenant:<tenant>" or
// "tenant_group:<group>". It does not validate: anything else comes back
// as a type Validate refuses ("global:x" included), so that the API, or
// the caller, names the mistake.
func ParseCredentialScope(v string) CredentialScope {
	typ, name, _ := strings.Cut(v, ":")
	sc := CredentialScope{Type: ScopeType(strings.TrimSpace(typ))}
	switch sc.Type {
	case ScopeTenant:
		sc.Tenant = strings.TrimSpace(name)
	case ScopeTenantGroup:
		sc.TenantGroup = strings.TrimSpace(name)
	default:
		sc.Type = ScopeType(strings.TrimSpace(v))
	}
	return sc
}

// ScopeSpelling is how ParseCredentialScope reads a scope, for help texts.
const ScopeSpelling = "global, tenant:<tenant> or tenant_group:<group>"
