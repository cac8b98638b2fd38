package vaults

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Tenancies is what a credential's use is judged by: the session it is
// used for, and the installation its origin came through (whose tenant
// group the session is in).
type Tenancies interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	FindInstallation(ctx context.Context, provider, externalID string) (*core.Installation, error)
}

// TenancyOf is what session s uses credentials as: its tenant, and the
// tenant group of the installation it came through. A session created
// over the API belongs to no installation, so to no tenant group.
func TenancyOf(ctx context.Context, st Tenancies, s *core.Session) (core.Tenancy, error) {
	t := core.Tenancy{Session: s.ID, Tenant: s.MemoryTenant()}
	if s.Origin == nil || s.Origin.TenantID == "" || st == nil {
		return t, nil
	}
	in, err := st.FindInstallation(ctx, s.Origin.Provider, s.Origin.TenantID)
	switch {
	case errors.Is(err, core.ErrNotFound):
		// Recorded lazily: not known yet, so in no group.
	case err != nil:
		return t, fmt.Errorf("session %s: its installation: %w", s.ID, err)
	case in.TenantGroup != "":
		t.Groups = []string{in.TenantGroup}
	}
	return t, nil
}

// checkUse refuses a scoped credential that the session ctx resolves for
// (core.WithCredentialSession) may not use, or that no session asked for.
// A global credential costs no look-up.
func (r *Resolver) checkUse(ctx context.Context, c *core.Credential) error {
	if c.Scope.IsGlobal() {
		return nil
	}
	id := core.CredentialSessionFrom(ctx)
	if id == "" {
		return core.CheckCredentialUse(c, core.Tenancy{})
	}
	if r.Sessions == nil {
		return fmt.Errorf("credential %s (%s) is scoped to %s, and this gateway cannot tell session %s's tenant: %w", c.ID, c.Name, c.Scope, id, core.ErrForbidden)
	}
	s, err := r.Sessions.GetSession(ctx, id)
	if err != nil {
		return fmt.Errorf("credential %s: the session it is used for: %w", c.ID, err)
	}
	t, err := TenancyOf(ctx, r.Sessions, s)
	if err != nil {
		return err
	}
	return core.CheckCredentialUse(c, t)
}

// CheckSession refuses a session whose agent or environment names a
// credential its tenancy may not use, saying which and whose it is: the
// check at create. Credentials that do not exist are left to the use,
// which reports them. env is the environment the session runs in (nil:
// none).
func (r *Resolver) CheckSession(ctx context.Context, t core.Tenancy, a *core.Agent, env *core.Environment) error {
	type named struct{ field, id string }
	var ids []named
	for _, m := range a.MCPServers {
		if m.Auth != nil && m.Auth.VaultCredential != "" {
			ids = append(ids, named{fmt.Sprintf("agent %s's mcp server %q", a.Name, m.Name), m.Auth.VaultCredential})
		}
	}
	if a.Runtime.Kind == core.RuntimeACP && a.Runtime.ModelCredential != "" {
		ids = append(ids, named{fmt.Sprintf("agent %s's runtime.model_credential", a.Name), a.Runtime.ModelCredential})
	}
	if env != nil {
		for _, id := range env.Credentials {
			ids = append(ids, named{fmt.Sprintf("environment %s's credentials", env.Name), id})
		}
	}
	for _, n := range ids {
		c, _, err := r.Store.GetCredential(ctx, n.id)
		if errors.Is(err, core.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := core.CheckCredentialUse(c, t); err != nil {
			return fmt.Errorf("%s: %w", n.field, err)
		}
	}
	return nil
}
