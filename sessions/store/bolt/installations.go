package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

var _ core.InstallationStore = (*Store)(nil)

// Installation bucket names; doc.go describes what each holds.
const (
	bucketInstallations      = "installations"
	bucketInstallationKeys   = "installation_keys"
	bucketInstallationTokens = "installation_tokens"
)

// installationKey indexes an installation by provider and external id. A
// provider name never contains 0x00, so the key splits at the first one.
func installationKey(provider, externalID string) []byte {
	k := make([]byte, 0, len(provider)+1+len(externalID))
	return append(append(append(k, provider...), 0), externalID...)
}

func decodeInstallation(v []byte) (*core.Installation, error) {
	return record.Decode[core.Installation]("installation", v)
}

func getInstallation(tx *bbolt.Tx, id string) (*core.Installation, error) {
	v, err := installationBytes(tx, id)
	if err != nil {
		return nil, err
	}
	return decodeInstallation(v)
}

// installationBytes is installation id's stored record.
func installationBytes(tx *bbolt.Tx, id string) ([]byte, error) {
	v := bkt(tx, bucketInstallations).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("installation %q: %w", id, core.ErrNotFound)
	}
	return v, nil
}

func putInstallation(tx *bbolt.Tx, in *core.Installation) error {
	v, err := record.Encode("installation", in.ID, in)
	if err != nil {
		return err
	}
	return bkt(tx, bucketInstallations).Put([]byte(in.ID), v)
}

// SaveInstallation creates or updates the installation of a provider's
// tenant, and replaces its tokens when sealed is given, in one transaction.
func (s *Store) SaveInstallation(ctx context.Context, in *core.Installation, sealed []byte, tokenExpiresAt *core.Time) (*core.Installation, error) {
	if err := record.ValidInstallation(in); err != nil {
		return nil, err
	}
	return writeOne(ctx, s, "save installation", func(tx *bbolt.Tx) (*core.Installation, error) {
		now := s.clock()
		key := installationKey(in.Provider, in.ExternalID)
		rec := record.NewInstallation(in, now)
		if id := bkt(tx, bucketInstallationKeys).Get(key); id != nil {
			existing, err := getInstallation(tx, string(id))
			if err != nil {
				return nil, err
			}
			rec = existing
		}
		record.SaveInstallation(rec, in, sealed != nil, tokenExpiresAt, now)
		if sealed != nil {
			if err := bkt(tx, bucketInstallationTokens).Put([]byte(rec.ID), sealed); err != nil {
				return nil, err
			}
		}
		if err := bkt(tx, bucketInstallationKeys).Put(key, []byte(rec.ID)); err != nil {
			return nil, err
		}
		return rec, putInstallation(tx, rec)
	})
}

// GetInstallation returns one installation.
func (s *Store) GetInstallation(ctx context.Context, id string) (*core.Installation, error) {
	return viewOne(ctx, s, "get installation", func(tx *bbolt.Tx) (*core.Installation, error) { return s.installations.read(tx, id, installationBytes) })
}

// FindInstallation returns the installation of a provider's tenant.
func (s *Store) FindInstallation(ctx context.Context, provider, externalID string) (*core.Installation, error) {
	return viewOne(ctx, s, "find installation", func(tx *bbolt.Tx) (*core.Installation, error) {
		id := bkt(tx, bucketInstallationKeys).Get(installationKey(provider, externalID))
		if id == nil {
			return nil, fmt.Errorf("%s installation %q: %w", provider, externalID, core.ErrNotFound)
		}
		return s.installations.read(tx, string(id), installationBytes)
	})
}

// ListInstallations pages through installations in id order.
func (s *Store) ListInstallations(ctx context.Context, q core.InstallationQuery) ([]*core.Installation, bool, error) {
	list, more, err := listWhere(ctx, s, bucketInstallations, q.After, q.Limit, decodeInstallation, func(in *core.Installation) bool {
		return q.Provider == "" || in.Provider == q.Provider
	})
	if err != nil {
		return nil, false, fmt.Errorf("list installations: %w", err)
	}
	return list, more, nil
}

// UpdateInstallation applies fn to a copy of the record and saves what fn
// may change.
func (s *Store) UpdateInstallation(ctx context.Context, id string, fn func(*core.Installation) error) (*core.Installation, error) {
	return writeOne(ctx, s, "update installation", func(tx *bbolt.Tx) (*core.Installation, error) {
		rec, err := getInstallation(tx, id)
		if err != nil {
			return nil, err
		}
		next, err := record.UpdateInstallation(rec, fn, s.clock())
		if err != nil {
			return nil, err
		}
		return next, putInstallation(tx, next)
	})
}

// InstallationTokens returns the sealed tokens.
func (s *Store) InstallationTokens(ctx context.Context, id string) ([]byte, error) {
	return viewOne(ctx, s, "installation tokens", func(tx *bbolt.Tx) ([]byte, error) {
		// Every platform call reads them: the record is checked for, not
		// decoded.
		if bkt(tx, bucketInstallations).Get([]byte(id)) == nil {
			return nil, fmt.Errorf("installation %q: %w", id, core.ErrNotFound)
		}
		v := bkt(tx, bucketInstallationTokens).Get([]byte(id))
		if v == nil {
			return nil, fmt.Errorf("tokens of installation %q: %w", id, core.ErrNotFound)
		}
		return bytes.Clone(v), nil
	})
}

// PutInstallationTokens replaces the sealed tokens and their expiry.
func (s *Store) PutInstallationTokens(ctx context.Context, id string, sealed []byte, expiresAt *core.Time) error {
	if err := record.CheckTokens(sealed); err != nil {
		return err
	}
	return s.setInstallationTokens(ctx, "put installation tokens", id, sealed, expiresAt)
}

// ForgetInstallationTokens deletes the tokens and keeps the record.
func (s *Store) ForgetInstallationTokens(ctx context.Context, id string) error {
	return s.setInstallationTokens(ctx, "forget installation tokens", id, nil, nil)
}

// setInstallationTokens stores sealed tokens on an installation, or
// deletes them when sealed is nil, keeping the record's token fields in
// step in the same transaction.
func (s *Store) setInstallationTokens(ctx context.Context, what, id string, sealed []byte, expiresAt *core.Time) error {
	return s.updateTx(ctx, what, func(tx *bbolt.Tx) error {
		rec, err := getInstallation(tx, id)
		if err != nil {
			return err
		}
		tokens := bkt(tx, bucketInstallationTokens)
		if sealed == nil {
			err = tokens.Delete([]byte(id))
		} else {
			err = tokens.Put([]byte(id), sealed)
		}
		if err != nil {
			return err
		}
		record.SetTokens(rec, sealed, expiresAt, s.clock())
		return putInstallation(tx, rec)
	})
}

// DeleteInstallation deletes the record, its index entry and its tokens in
// one transaction.
func (s *Store) DeleteInstallation(ctx context.Context, id string) error {
	return s.updateTx(ctx, "delete installation", func(tx *bbolt.Tx) error {
		rec, err := getInstallation(tx, id)
		if err != nil {
			return err
		}
		if err := bkt(tx, bucketInstallationTokens).Delete([]byte(id)); err != nil {
			return err
		}
		if err := bkt(tx, bucketInstallationKeys).Delete(installationKey(rec.Provider, rec.ExternalID)); err != nil {
			return err
		}
		return bkt(tx, bucketInstallations).Delete([]byte(id))
	})
}
