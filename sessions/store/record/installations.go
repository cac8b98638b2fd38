package record

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// ValidInstallation refuses, before any transaction, an installation a
// store cannot key: the bbolt store splits its index key at the first
// 0x00 after the provider.
func ValidInstallation(in *core.Installation) error {
	switch {
	case in.Provider == "" || strings.ContainsRune(in.Provider, 0):
		return fmt.Errorf("installation provider %q: %w", in.Provider, core.ErrInvalid)
	case in.ExternalID == "":
		return fmt.Errorf("installation external id is required: %w", core.ErrInvalid)
	}
	return nil
}

// NewInstallation is the record SaveInstallation creates for in at now
// when its provider's tenant has none yet.
func NewInstallation(in *core.Installation, now core.Time) *core.Installation {
	return &core.Installation{ID: core.NewID(core.PrefixInstallation), Provider: in.Provider, ExternalID: in.ExternalID,
		Agent: in.Agent, Policy: in.Policy, CreatedAt: now, UpdatedAt: now}
}

// SaveInstallation updates rec, the tenant's record (NewInstallation's
// for a new one), with what an install gives at now: name, scopes and
// metadata, and, when it stores tokens (sealed), that it has them and
// when they expire. Agent and policy stay as an admin set them.
func SaveInstallation(rec, in *core.Installation, sealed bool, tokenExpiresAt *core.Time, now core.Time) {
	rec.Name = in.Name
	rec.Scopes = slices.Clone(in.Scopes)
	rec.Metadata = maps.Clone(in.Metadata)
	rec.UpdatedAt = now
	if sealed {
		rec.HasToken, rec.TokenExpiresAt = true, tokenExpiresAt
	}
}

// UpdateInstallation is rec changed by fn at now: fn works on a copy, and
// what it may not change (identity, tokens, creation) is put back.
func UpdateInstallation(rec *core.Installation, fn func(*core.Installation) error, now core.Time) (*core.Installation, error) {
	next := *rec
	next.Policy = core.AccessPolicy{Channels: slices.Clone(rec.Policy.Channels), Users: slices.Clone(rec.Policy.Users)}
	next.Scopes = slices.Clone(rec.Scopes)
	next.Metadata = maps.Clone(rec.Metadata)
	next.BudgetApprovers = slices.Clone(rec.BudgetApprovers)
	if err := fn(&next); err != nil {
		return nil, err
	}
	next.ID, next.Provider, next.ExternalID = rec.ID, rec.Provider, rec.ExternalID
	next.HasToken, next.TokenExpiresAt, next.CreatedAt = rec.HasToken, rec.TokenExpiresAt, rec.CreatedAt
	next.UpdatedAt = now
	return &next, nil
}

// CheckTokens refuses empty sealed tokens to put (forgetting them is
// another call).
func CheckTokens(sealed []byte) error {
	if len(sealed) == 0 {
		return fmt.Errorf("put installation tokens: empty: %w", core.ErrInvalid)
	}
	return nil
}

// SetTokens keeps rec's token fields in step with the tokens a store
// keeps for it at now: sealed ones, or none (nil).
func SetTokens(rec *core.Installation, sealed []byte, expiresAt *core.Time, now core.Time) {
	rec.HasToken, rec.TokenExpiresAt, rec.UpdatedAt = sealed != nil, expiresAt, now
}

// RefreshTokens is RefreshInstallationTokens once a store holds the
// installation's refresh lock and has read its current tokens: it runs
// refresh on them (core.RunRefresh) and stores what it gives back with
// store, unless it keeps them, and returns the tokens stored when it
// ends. The platform has spent the old tokens once refresh returns new
// ones: store must store them even when the caller gave up meanwhile.
func RefreshTokens(log *slog.Logger, id string, current []byte, refresh func(current []byte) ([]byte, *core.Time, error), store func(next []byte, expiresAt *core.Time) error) ([]byte, error) {
	next, expiresAt, err := core.RunRefresh(id, current, refresh)
	if err != nil {
		return nil, err
	}
	if next == nil {
		return current, nil
	}
	if err := store(next, expiresAt); err != nil {
		log.Error("refreshed installation tokens could not be stored", "installation_id", id, "err", err)
		return nil, fmt.Errorf("refresh installation tokens: store: %w", err)
	}
	log.Debug("installation tokens refreshed", "installation_id", id)
	return next, nil
}
