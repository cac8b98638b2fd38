package record

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// NewVault is the vault record CreateVault stores for in at now, and its
// stored form: an id given when in has none, the id's prefix and the
// name checked.
func NewVault(in *core.Vault, now core.Time) (*core.Vault, []byte, error) {
	v := *in
	if err := newID(&v.ID, core.PrefixVault, "create vault", "a vault id"); err != nil {
		return nil, nil, err
	}
	if v.Name == "" {
		return nil, nil, fmt.Errorf("create vault: name is required: %w", core.ErrInvalid)
	}
	v.CreatedAt, v.UpdatedAt = now, now
	raw, err := Encode("vault", v.ID, &v)
	if err != nil {
		return nil, nil, fmt.Errorf("create vault: %w", err)
	}
	return &v, raw, nil
}

// CheckCredential refuses, before any transaction, a credential and
// sealed secret PutCredential cannot store.
func CheckCredential(c *core.Credential, sealed []byte) error {
	switch {
	case !core.HasPrefix(c.ID, core.PrefixCredential):
		return fmt.Errorf("id %q is not a credential id: %w", c.ID, core.ErrInvalid)
	case c.Name == "":
		return fmt.Errorf("credential %s: name is required: %w", c.ID, core.ErrInvalid)
	case c.Kind != core.CredentialStaticBearer && c.Kind != core.CredentialHeader && c.Kind != core.CredentialOAuth:
		return fmt.Errorf("credential %s: unknown kind %q: %w", c.ID, c.Kind, core.ErrInvalid)
	case len(sealed) == 0:
		return fmt.Errorf("credential %s: sealed secret is empty: %w", c.ID, core.ErrInvalid)
	}
	if err := c.Scope.Validate(); err != nil {
		return fmt.Errorf("credential %s: %w", c.ID, err)
	}
	return nil
}

// PutCredential is the record PutCredential stores for in at now, over
// prev, the credential stored under its id (nil: none). A credential
// never moves between vaults; its creation time is kept across
// replacements. An empty scope is stored as global.
func PutCredential(in, prev *core.Credential, now core.Time) (*core.Credential, error) {
	c := *in
	c.Scope = c.Scope.Normal()
	c.CreatedAt, c.UpdatedAt = now, now
	if prev != nil {
		if prev.VaultID != c.VaultID {
			return nil, fmt.Errorf("credential %s belongs to vault %s, not %s: %w", c.ID, prev.VaultID, c.VaultID, core.ErrConflict)
		}
		c.CreatedAt = prev.CreatedAt
	}
	return &c, nil
}

// DecodeCredential decodes a stored credential. One stored before scopes
// existed, which a store's migration has not reached yet, reads as
// global.
func DecodeCredential(raw []byte) (*core.Credential, error) {
	c, err := Decode[core.Credential]("credential", raw)
	if err != nil {
		return nil, err
	}
	c.Scope = c.Scope.Normal()
	return c, nil
}
