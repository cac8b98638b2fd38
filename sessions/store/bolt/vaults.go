package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.VaultStore = (*Store)(nil)

// Vault bucket names; doc.go describes what each holds.
const (
	bucketVaults            = "vaults"
	bucketCredentials       = "credentials"
	bucketCredentialSecrets = "credential_secrets"
	bucketVaultCredentials  = "vault_credentials"
)

// vaultCredentialKey indexes a credential under its vault. Vault and
// credential ids both have the fixed length of core.NewID's output (the
// store refuses any other), so the concatenation splits unambiguously and
// a prefix scan on a vault id finds exactly its credentials.
func vaultCredentialKey(vaultID, id string) []byte {
	return append([]byte(vaultID), id...)
}

func decodeVault(v []byte) (*core.Vault, error) { return record.Decode[core.Vault]("vault", v) }

func decodeCredential(v []byte) (*core.Credential, error) {
	return record.Decode[core.Credential]("credential", v)
}

// CreateVault saves a new vault. An empty ID gets a fresh one; a given ID
// must look like one (see vaultCredentialKey).
func (s *Store) CreateVault(ctx context.Context, in *core.Vault) (*core.Vault, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	v, err := record.NewVault(in, s.clock())
	if err != nil {
		return nil, err
	}
	raw, err := record.Encode("vault", v.ID, v)
	if err != nil {
		return nil, fmt.Errorf("create vault: %w", err)
	}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b := bkt(tx, bucketVaults)
		if b.Get([]byte(v.ID)) != nil {
			return fmt.Errorf("vault %s already exists: %w", v.ID, core.ErrConflict)
		}
		return b.Put([]byte(v.ID), raw)
	})
	if err != nil {
		return nil, fmt.Errorf("create vault: %w", err)
	}
	s.log.Debug("vault created", "vault_id", v.ID)
	return decodeVault(raw)
}

func getVault(tx *bbolt.Tx, id string) (*core.Vault, error) {
	v := bkt(tx, bucketVaults).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("vault %q: %w", id, core.ErrNotFound)
	}
	return decodeVault(v)
}

// GetVault returns one vault.
func (s *Store) GetVault(ctx context.Context, id string) (*core.Vault, error) {
	return viewOne(ctx, s, "get vault", func(tx *bbolt.Tx) (*core.Vault, error) { return getVault(tx, id) })
}

// ListVaults pages through vaults in id order (creation order, to the
// millisecond).
func (s *Store) ListVaults(ctx context.Context, after string, limit int) ([]*core.Vault, bool, error) {
	list, more, err := listPage(ctx, s, bucketVaults, after, limit, decodeVault)
	if err != nil {
		return nil, false, fmt.Errorf("list vaults: %w", err)
	}
	return list, more, nil
}

// vaultCredentialIDs returns the ids of a vault's credentials in id order.
func vaultCredentialIDs(tx *bbolt.Tx, vaultID string) []string {
	var ids []string
	prefix := []byte(vaultID)
	c := bkt(tx, bucketVaultCredentials).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids
}

// deleteCredential removes a credential's record, secret and index entry.
func deleteCredential(tx *bbolt.Tx, vaultID, id string) error {
	for _, del := range []struct {
		bucket string
		key    []byte
	}{
		{bucketCredentials, []byte(id)},
		{bucketCredentialSecrets, []byte(id)},
		{bucketVaultCredentials, vaultCredentialKey(vaultID, id)},
	} {
		if err := bkt(tx, del.bucket).Delete(del.key); err != nil {
			return fmt.Errorf("delete credential %s from %s: %w", id, del.bucket, err)
		}
	}
	return nil
}

// DeleteVault deletes the vault and, in the same transaction, every
// credential in it, so no sealed secret outlives its vault.
func (s *Store) DeleteVault(ctx context.Context, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	n := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getVault(tx, id); err != nil {
			return err
		}
		// Collected first: bbolt cursors must not walk a bucket while it
		// is being deleted from.
		ids := vaultCredentialIDs(tx, id)
		n = len(ids)
		for _, cid := range ids {
			if err := deleteCredential(tx, id, cid); err != nil {
				return err
			}
		}
		return bkt(tx, bucketVaults).Delete([]byte(id))
	})
	if err != nil {
		return fmt.Errorf("delete vault: %w", err)
	}
	s.log.Debug("vault deleted", "vault_id", id, "credentials", n)
	return nil
}

// PutCredential creates or replaces a credential and its sealed secret.
// The caller assigns the id, because it seals the secret to it (the aad)
// before the store sees either. A credential never moves between vaults;
// CreatedAt is kept across replacements.
func (s *Store) PutCredential(ctx context.Context, in *core.Credential, sealed []byte) (*core.Credential, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := record.CheckCredential(in, sealed); err != nil {
		return nil, fmt.Errorf("put credential: %w", err)
	}
	var raw []byte
	now := s.clock()
	err := s.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getVault(tx, in.VaultID); err != nil {
			return err
		}
		var prev *core.Credential
		if old := bkt(tx, bucketCredentials).Get([]byte(in.ID)); old != nil {
			var err error
			if prev, err = decodeCredential(old); err != nil {
				return err
			}
		}
		c, err := record.PutCredential(in, prev, now)
		if err != nil {
			return err
		}
		if raw, err = record.Encode("credential", c.ID, c); err != nil {
			return err
		}
		if err := bkt(tx, bucketCredentials).Put([]byte(c.ID), raw); err != nil {
			return err
		}
		if err := bkt(tx, bucketCredentialSecrets).Put([]byte(c.ID), sealed); err != nil {
			return err
		}
		return bkt(tx, bucketVaultCredentials).Put(vaultCredentialKey(c.VaultID, c.ID), nil)
	})
	if err != nil {
		return nil, fmt.Errorf("put credential: %w", err)
	}
	s.log.Debug("credential stored", "vault_id", in.VaultID, "credential_id", in.ID, "kind", string(in.Kind))
	return decodeCredential(raw)
}

// GetCredential returns a credential and a copy of its sealed secret.
func (s *Store) GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	var out *core.Credential
	var sealed []byte
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := bkt(tx, bucketCredentials).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("credential %q: %w", id, core.ErrNotFound)
		}
		var err error
		if out, err = decodeCredential(v); err != nil {
			return err
		}
		// bbolt's memory is only valid inside the transaction.
		sealed = bytes.Clone(bkt(tx, bucketCredentialSecrets).Get([]byte(id)))
		if sealed == nil {
			return fmt.Errorf("credential %s has no secret stored", id)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("get credential: %w", err)
	}
	return out, sealed, nil
}

// ListCredentials returns a vault's credentials in id order.
func (s *Store) ListCredentials(ctx context.Context, vaultID string) ([]*core.Credential, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []*core.Credential{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if _, err := getVault(tx, vaultID); err != nil {
			return err
		}
		creds := bkt(tx, bucketCredentials)
		for _, id := range vaultCredentialIDs(tx, vaultID) {
			v := creds.Get([]byte(id))
			if v == nil {
				return fmt.Errorf("vault %s indexes credential %s, which is missing", vaultID, id)
			}
			c, err := decodeCredential(v)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return out, nil
}

// DeleteCredential deletes a credential of the vault; one of another vault
// is not found, as if it did not exist.
func (s *Store) DeleteCredential(ctx context.Context, vaultID, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		v := bkt(tx, bucketCredentials).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("credential %q: %w", id, core.ErrNotFound)
		}
		c, err := decodeCredential(v)
		if err != nil {
			return err
		}
		if c.VaultID != vaultID {
			return fmt.Errorf("credential %q in vault %q: %w", id, vaultID, core.ErrNotFound)
		}
		return deleteCredential(tx, vaultID, id)
	})
	if err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	s.log.Debug("credential deleted", "vault_id", vaultID, "credential_id", id)
	return nil
}
