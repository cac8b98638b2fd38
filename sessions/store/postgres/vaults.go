package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.VaultStore = (*Store)(nil)

// CreateVault saves a new vault. An empty ID gets a fresh one; a given ID
// must look like one.
func (s *Store) CreateVault(ctx context.Context, in *core.Vault) (*core.Vault, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	v, raw, err := record.NewVault(in, s.clock())
	if err != nil {
		return nil, err
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO vaults (id, body) VALUES ($1, $2)", v.ID, raw)
		if isUnique(err) {
			return fmt.Errorf("vault %s already exists: %w", v.ID, core.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create vault: %w", err)
	}
	s.log.Debug("vault created", "vault_id", v.ID)
	return record.Decode[core.Vault]("vault", raw)
}

// GetVault returns one vault.
func (s *Store) GetVault(ctx context.Context, id string) (*core.Vault, error) {
	return readOne[core.Vault](ctx, s, "get vault", "vault", id, "SELECT body FROM vaults WHERE id = $1", id)
}

// ListVaults pages through vaults in id order (creation order, to the
// millisecond).
func (s *Store) ListVaults(ctx context.Context, after string, limit int) ([]*core.Vault, bool, error) {
	return bodyPage[core.Vault](ctx, s, "vaults",
		"SELECT body FROM vaults WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

// lockVault locks a vault's row: mode is "UPDATE" to delete it, "SHARE"
// to keep it (and its id) while a credential is written into it.
func lockVault(ctx context.Context, tx pgx.Tx, id, mode string) error {
	var one int
	err := tx.QueryRow(ctx, "SELECT 1 FROM vaults WHERE id = $1 FOR "+mode, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("vault %q: %w", id, core.ErrNotFound)
	}
	return err
}

// DeleteVault deletes the vault and, in the same transaction (the foreign
// keys cascade), every credential in it and their secrets, so no sealed
// secret outlives its vault.
func (s *Store) DeleteVault(ctx context.Context, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	var n int64
	err := s.do(ctx, func(tx pgx.Tx) error {
		if err := lockVault(ctx, tx, id, "UPDATE"); err != nil {
			return err
		}
		// Locked first, so the count is what the cascade deletes.
		rows, err := tx.Query(ctx, "SELECT id FROM credentials WHERE vault_id = $1 FOR UPDATE", id)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		n = int64(len(ids))
		_, err = tx.Exec(ctx, "DELETE FROM vaults WHERE id = $1", id)
		return err
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
	err := s.do(ctx, func(tx pgx.Tx) error {
		if err := lockVault(ctx, tx, in.VaultID, "SHARE"); err != nil {
			return err
		}
		now := s.clock()
		prev, err := lockOrInsert(ctx, tx, "credential "+in.ID, []any{in.ID},
			"SELECT body FROM credentials WHERE id = $1 FOR UPDATE",
			"INSERT INTO credentials (id, vault_id, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
			func() ([]any, error) {
				c, err := record.PutCredential(in, nil, now)
				if err == nil {
					raw, err = record.Encode("credential", c.ID, c)
				}
				return []any{in.ID, in.VaultID, raw}, err
			})
		if err != nil {
			return err
		}
		if prev != nil {
			old, err := record.DecodeCredential(prev)
			if err != nil {
				return err
			}
			c, err := record.PutCredential(in, old, now)
			if err != nil {
				return err
			}
			if raw, err = record.Encode("credential", c.ID, c); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE credentials SET body = $2 WHERE id = $1", c.ID, raw); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO credential_secrets (credential_id, sealed) VALUES ($1, $2)
			ON CONFLICT (credential_id) DO UPDATE SET sealed = EXCLUDED.sealed`, in.ID, sealed)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("put credential: %w", err)
	}
	out, err := record.DecodeCredential(raw)
	if err != nil {
		return nil, err
	}
	s.log.Debug("credential stored", "vault_id", out.VaultID, "credential_id", out.ID, "kind", string(out.Kind))
	return out, nil
}

// GetCredential returns a credential and its sealed secret.
func (s *Store) GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	var raw, sealed []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT c.body, x.sealed FROM credentials c
		LEFT JOIN credential_secrets x ON x.credential_id = c.id WHERE c.id = $1`, id).Scan(&raw, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("get credential: credential %q: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get credential %q: %w", id, err)
	}
	if sealed == nil {
		return nil, nil, fmt.Errorf("get credential: credential %s has no secret stored", id)
	}
	c, err := record.DecodeCredential(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("get credential: %w", err)
	}
	return c, sealed, nil
}

// ListCredentials returns a vault's credentials in id order, without
// their secrets. One statement reads the vault and its credentials, so a
// vault deleted meanwhile is not found rather than listed empty.
func (s *Store) ListCredentials(ctx context.Context, vaultID string) ([]*core.Credential, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT c.body FROM vaults v
		LEFT JOIN credentials c ON c.vault_id = v.id WHERE v.id = $1 ORDER BY c.id`, vaultID)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("list credentials: vault %q: %w", vaultID, core.ErrNotFound)
	}
	out := []*core.Credential{}
	for _, raw := range raws {
		if raw == nil { // the vault, without credentials
			continue
		}
		c, err := record.DecodeCredential(raw)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// DeleteCredential deletes a credential of the vault, and its secret; one
// of another vault is not found, as if it did not exist.
func (s *Store) DeleteCredential(ctx context.Context, vaultID, id string) error {
	err := s.deleteOne(ctx, "delete credential", fmt.Errorf("credential %q in vault %q: %w", id, vaultID, core.ErrNotFound),
		"DELETE FROM credentials WHERE id = $1 AND vault_id = $2", id, vaultID)
	if err == nil {
		s.log.Debug("credential deleted", "vault_id", vaultID, "credential_id", id)
	}
	return err
}
