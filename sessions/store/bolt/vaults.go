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
	return record.DecodeCredential(v)
}

// CreateVault saves a new vault. An empty ID gets a fresh one; a given ID
// must look like one (see vaultCredentialKey).
func (s *Store) CreateVault(ctx context.Context, in *core.Vault) (*core.Vault, error) {
	v, raw, err := record.NewVault(in, s.clock())
	if err != nil {
		return nil, err
	}
	err = s.updateTx(ctx, "create vault", func(tx *bbolt.Tx) error {
		b := bkt(tx, bucketVaults)
		if b.Get([]byte(v.ID)) != nil {
			return fmt.Errorf("vault %s already exists: %w", v.ID, core.ErrConflict)
		}
		return b.Put([]byte(v.ID), raw)
	})
	if err != nil {
		return nil, err
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
	n, err := writeOne(ctx, s, "delete vault", func(tx *bbolt.Tx) (int, error) {
		if _, err := getVault(tx, id); err != nil {
			return 0, err
		}
		// Collected first: bbolt cursors must not walk a bucket while it
		// is being deleted from.
		ids := vaultCredentialIDs(tx, id)
		for _, cid := range ids {
			if err := deleteCredential(tx, id, cid); err != nil {
				return 0, err
			}
		}
		return len(ids), bkt(tx, bucketVaults).Delete([]byte(id))
	})
	if err == nil {
		s.log.Debug("vault deleted", "vault_id", id, "credentials", n)
	}
	return err
}

// PutCredential creates or replaces a credential and its sealed secret.
// The caller assigns the id, because it seals the secret to it (the aad)
// before the store sees either. A credential never moves between vaults;
// CreatedAt is kept across replacements.
func (s *Store) PutCredential(ctx context.Context, in *core.Credential, sealed []byte) (*core.Credential, error) {
	if err := record.CheckCredential(in, sealed); err != nil {
		return nil, fmt.Errorf("put credential: %w", err)
	}
	now := s.clock()
	raw, err := writeOne(ctx, s, "put credential", func(tx *bbolt.Tx) ([]byte, error) {
		if _, err := getVault(tx, in.VaultID); err != nil {
			return nil, err
		}
		var prev *core.Credential
		if old := bkt(tx, bucketCredentials).Get([]byte(in.ID)); old != nil {
			var err error
			if prev, err = decodeCredential(old); err != nil {
				return nil, err
			}
		}
		c, err := record.PutCredential(in, prev, now)
		if err != nil {
			return nil, err
		}
		raw, err := record.Encode("credential", c.ID, c)
		if err != nil {
			return nil, err
		}
		for _, put := range []struct {
			bucket string
			k, v   []byte
		}{
			{bucketCredentials, []byte(c.ID), raw},
			{bucketCredentialSecrets, []byte(c.ID), sealed},
			{bucketVaultCredentials, vaultCredentialKey(c.VaultID, c.ID), nil},
		} {
			if err := bkt(tx, put.bucket).Put(put.k, put.v); err != nil {
				return nil, err
			}
		}
		return raw, nil
	})
	if err != nil {
		return nil, err
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
	return viewOne(ctx, s, "list credentials", func(tx *bbolt.Tx) ([]*core.Credential, error) {
		if _, err := getVault(tx, vaultID); err != nil {
			return nil, err
		}
		out := []*core.Credential{}
		creds := bkt(tx, bucketCredentials)
		for _, id := range vaultCredentialIDs(tx, vaultID) {
			v := creds.Get([]byte(id))
			if v == nil {
				return nil, fmt.Errorf("vault %s indexes credential %s, which is missing", vaultID, id)
			}
			c, err := decodeCredential(v)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	})
}

// DeleteCredential deletes a credential of the vault; one of another vault
// is not found, as if it did not exist.
func (s *Store) DeleteCredential(ctx context.Context, vaultID, id string) error {
	err := s.updateTx(ctx, "delete credential", func(tx *bbolt.Tx) error {
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
	if err == nil {
		s.log.Debug("credential deleted", "vault_id", vaultID, "credential_id", id)
	}
	return err
}
