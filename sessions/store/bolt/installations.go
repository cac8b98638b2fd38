package bolt

import (
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
	v := bkt(tx, bucketInstallations).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("installation %q: %w", id, core.ErrNotFound)
	}
	return decodeInstallation(v)
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
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := record.ValidInstallation(in); err != nil {
		return nil, err
	}
	var out *core.Installation
	err := s.db.Update(func(tx *bbolt.Tx) error {
		now := s.clock()
		key := installationKey(in.Provider, in.ExternalID)
		rec := record.NewInstallation(in, now)
		if id := bkt(tx, bucketInstallationKeys).Get(key); id != nil {
			existing, err := getInstallation(tx, string(id))
			if err != nil {
				return err
			}
			rec = existing
		}
		record.SaveInstallation(rec, in, sealed != nil, tokenExpiresAt, now)
		if sealed != nil {
			if err := bkt(tx, bucketInstallationTokens).Put([]byte(rec.ID), sealed); err != nil {
				return err
			}
		}
		if err := bkt(tx, bucketInstallationKeys).Put(key, []byte(rec.ID)); err != nil {
			return err
		}
		out = rec
		return putInstallation(tx, rec)
	})
	if err != nil {
		return nil, fmt.Errorf("save installation: %w", err)
	}
	return out, nil
}

// GetInstallation returns one installation.
func (s *Store) GetInstallation(ctx context.Context, id string) (*core.Installation, error) {
	return viewOne(ctx, s, "get installation", func(tx *bbolt.Tx) (*core.Installation, error) { return getInstallation(tx, id) })
}

// FindInstallation returns the installation of a provider's tenant.
func (s *Store) FindInstallation(ctx context.Context, provider, externalID string) (*core.Installation, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Installation
	err := s.db.View(func(tx *bbolt.Tx) error {
		id := bkt(tx, bucketInstallationKeys).Get(installationKey(provider, externalID))
		if id == nil {
			return fmt.Errorf("%s installation %q: %w", provider, externalID, core.ErrNotFound)
		}
		var err error
		out, err = getInstallation(tx, string(id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find installation: %w", err)
	}
	return out, nil
}

// ListInstallations pages through installations in id order.
func (s *Store) ListInstallations(ctx context.Context, q core.InstallationQuery) ([]*core.Installation, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit := record.ClampLimit(q.Limit)
	out := []*core.Installation{}
	more := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := bkt(tx, bucketInstallations).Cursor()
		k, v := c.Seek([]byte(q.After))
		if k != nil && q.After != "" && string(k) == q.After {
			k, v = c.Next()
		}
		for ; k != nil; k, v = c.Next() {
			in, err := decodeInstallation(v)
			if err != nil {
				return err
			}
			if q.Provider != "" && in.Provider != q.Provider {
				continue
			}
			if len(out) == limit {
				more = true
				return nil
			}
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("list installations: %w", err)
	}
	return out, more, nil
}

// UpdateInstallation applies fn to a copy of the record and saves what fn
// may change.
func (s *Store) UpdateInstallation(ctx context.Context, id string, fn func(*core.Installation) error) (*core.Installation, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Installation
	err := s.db.Update(func(tx *bbolt.Tx) error {
		rec, err := getInstallation(tx, id)
		if err != nil {
			return err
		}
		next, err := record.UpdateInstallation(rec, fn, s.clock())
		if err != nil {
			return err
		}
		out = next
		return putInstallation(tx, next)
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
	var out []byte
	err := s.db.View(func(tx *bbolt.Tx) error {
		if _, err := getInstallation(tx, id); err != nil {
			return err
		}
		v := bkt(tx, bucketInstallationTokens).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("tokens of installation %q: %w", id, core.ErrNotFound)
		}
		out = append([]byte{}, v...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("installation tokens: %w", err)
	}
	return out, nil
}

// PutInstallationTokens replaces the sealed tokens and their expiry.
func (s *Store) PutInstallationTokens(ctx context.Context, id string, sealed []byte, expiresAt *core.Time) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := record.CheckTokens(sealed); err != nil {
		return err
	}
	if err := s.setInstallationTokens(id, sealed, expiresAt); err != nil {
		return fmt.Errorf("put installation tokens: %w", err)
	}
	return nil
}

// ForgetInstallationTokens deletes the tokens and keeps the record.
func (s *Store) ForgetInstallationTokens(ctx context.Context, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := s.setInstallationTokens(id, nil, nil); err != nil {
		return fmt.Errorf("forget installation tokens: %w", err)
	}
	return nil
}

// setInstallationTokens stores sealed tokens on an installation, or
// deletes them when sealed is nil, keeping the record's token fields in
// step in the same transaction.
func (s *Store) setInstallationTokens(id string, sealed []byte, expiresAt *core.Time) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
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
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
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
	if err != nil {
		return fmt.Errorf("delete installation: %w", err)
	}
	return nil
}
