package postgres

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

var _ core.InstallationStore = (*Store)(nil)

// lockInstallation locks an installation's row and returns its record.
// Every write of an installation or its tokens locks this row first.
func lockInstallation(ctx context.Context, tx pgx.Tx, id string) (*core.Installation, error) {
	return getBody[core.Installation](ctx, tx, "installation", id, "SELECT body FROM installations WHERE id = $1 FOR UPDATE", id)
}

// putInstallation writes the record (its identity columns never change)
// and returns it as a later read will see it.
func putInstallation(ctx context.Context, tx pgx.Tx, in *core.Installation) (*core.Installation, error) {
	raw, err := record.Encode("installation", in.ID, in)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "UPDATE installations SET body = $2 WHERE id = $1", in.ID, raw); err != nil {
		return nil, err
	}
	return record.Decode[core.Installation]("installation", raw)
}

// setTokens stores sealed as the installation's tokens, or deletes them
// when sealed is nil; the caller holds the installation's row and keeps
// its record's token fields in step.
func setTokens(ctx context.Context, tx pgx.Tx, id string, sealed []byte) error {
	var err error
	if sealed == nil {
		_, err = tx.Exec(ctx, "DELETE FROM installation_tokens WHERE installation_id = $1", id)
	} else {
		_, err = tx.Exec(ctx, `INSERT INTO installation_tokens (installation_id, sealed) VALUES ($1, $2)
			ON CONFLICT (installation_id) DO UPDATE SET sealed = EXCLUDED.sealed`, id, sealed)
	}
	return err
}

// SaveInstallation creates or updates the installation of a provider's
// tenant, and replaces its tokens when sealed is given, in one
// transaction. Two replicas saving the same tenant at once take turns on
// its row (see lockOrInsert): one creates it, the other updates it.
func (s *Store) SaveInstallation(ctx context.Context, in *core.Installation, sealed []byte, tokenExpiresAt *core.Time) (*core.Installation, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := record.ValidInstallation(in); err != nil {
		return nil, err
	}
	var out *core.Installation
	err := s.do(ctx, func(tx pgx.Tx) error {
		now := s.clock()
		rec := record.NewInstallation(in, now)
		prev, err := lockOrInsert(ctx, tx, in.Provider+" installation "+in.ExternalID, []any{in.Provider, in.ExternalID},
			"SELECT body FROM installations WHERE provider = $1 AND external_id = $2 FOR UPDATE",
			`INSERT INTO installations (id, provider, external_id, body) VALUES ($1, $2, $3, $4)
				ON CONFLICT (provider, external_id) DO NOTHING`,
			func() ([]any, error) {
				raw, err := record.Encode("installation", rec.ID, rec)
				return []any{rec.ID, rec.Provider, rec.ExternalID, raw}, err
			})
		if err != nil {
			return err
		}
		if prev != nil {
			if rec, err = record.Decode[core.Installation]("installation", prev); err != nil {
				return err
			}
		}
		record.SaveInstallation(rec, in, sealed != nil, tokenExpiresAt, now)
		if sealed != nil {
			if err := setTokens(ctx, tx, rec.ID, sealed); err != nil {
				return err
			}
		}
		out, err = putInstallation(ctx, tx, rec)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("save installation: %w", err)
	}
	return out, nil
}

// GetInstallation returns one installation.
func (s *Store) GetInstallation(ctx context.Context, id string) (*core.Installation, error) {
	return readOne[core.Installation](ctx, s, "get installation", "installation", id, "SELECT body FROM installations WHERE id = $1", id)
}

// FindInstallation returns the installation of a provider's tenant.
func (s *Store) FindInstallation(ctx context.Context, provider, externalID string) (*core.Installation, error) {
	return readOne[core.Installation](ctx, s, "find installation", provider+" installation", externalID,
		"SELECT body FROM installations WHERE provider = $1 AND external_id = $2", provider, externalID)
}

// ListInstallations pages through installations in id order, of one
// provider when the query names it.
func (s *Store) ListInstallations(ctx context.Context, q core.InstallationQuery) ([]*core.Installation, bool, error) {
	return bodyPage[core.Installation](ctx, s, "installations",
		"SELECT body FROM installations WHERE id > $1 AND ($3 = '' OR provider = $3) ORDER BY id LIMIT $2",
		q.After, q.Limit, q.Provider)
}

// UpdateInstallation applies fn to a copy of the locked record and saves
// what fn may change.
func (s *Store) UpdateInstallation(ctx context.Context, id string, fn func(*core.Installation) error) (*core.Installation, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Installation
	err := s.do(ctx, func(tx pgx.Tx) error {
		rec, err := lockInstallation(ctx, tx, id)
		if err != nil {
			return err
		}
		next, err := record.UpdateInstallation(rec, fn, s.clock())
		if err != nil {
			return err
		}
		out, err = putInstallation(ctx, tx, next)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update installation: %w", err)
	}
	return out, nil
}

// InstallationTokens returns the sealed tokens.
func (s *Store) InstallationTokens(ctx context.Context, id string) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	sealed, err := installationTokens(ctx, s.poolFor(ctx), id)
	if err != nil {
		return nil, fmt.Errorf("installation tokens: %w", err)
	}
	return sealed, nil
}

// PutInstallationTokens replaces the sealed tokens and their expiry.
func (s *Store) PutInstallationTokens(ctx context.Context, id string, sealed []byte, expiresAt *core.Time) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := record.CheckTokens(sealed); err != nil {
		return err
	}
	if err := s.do(ctx, func(tx pgx.Tx) error { return s.replaceTokens(ctx, tx, id, sealed, expiresAt) }); err != nil {
		return fmt.Errorf("put installation tokens: %w", err)
	}
	return nil
}

// ForgetInstallationTokens deletes the tokens and keeps the record.
func (s *Store) ForgetInstallationTokens(ctx context.Context, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := s.do(ctx, func(tx pgx.Tx) error { return s.replaceTokens(ctx, tx, id, nil, nil) }); err != nil {
		return fmt.Errorf("forget installation tokens: %w", err)
	}
	return nil
}

// replaceTokens stores sealed tokens on an installation, or deletes them
// when sealed is nil, keeping the record's token fields in step.
func (s *Store) replaceTokens(ctx context.Context, tx pgx.Tx, id string, sealed []byte, expiresAt *core.Time) error {
	rec, err := lockInstallation(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := setTokens(ctx, tx, id, sealed); err != nil {
		return err
	}
	record.SetTokens(rec, sealed, expiresAt, s.clock())
	_, err = putInstallation(ctx, tx, rec)
	return err
}

// DeleteInstallation deletes the record and (the foreign key cascades)
// its tokens.
func (s *Store) DeleteInstallation(ctx context.Context, id string) error {
	return s.deleteOne(ctx, "delete installation", fmt.Errorf("installation %q: %w", id, core.ErrNotFound),
		"DELETE FROM installations WHERE id = $1", id)
}
