package providers

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
)

// KeyInstaller is a provider that names the installation an origin key
// of its belongs to.
type KeyInstaller interface {
	Provider
	InstallationOfKey(ctx context.Context, key string) (*core.Installation, error)
}

// InstallationOfKey is the installation an origin key belongs to.
func (s *Set) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	provider, err := core.KeyProvider(key)
	if err != nil {
		return nil, err
	}
	p, ok := s.origin(provider).(KeyInstaller)
	if !ok {
		return nil, fmt.Errorf("key %q: %s is not configured here: %w", key, provider, core.ErrInvalid)
	}
	in, err := p.InstallationOfKey(ctx, key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("key %q: no installation of %s serves it: %w", key, provider, core.ErrInvalid)
	}
	return in, err
}

// CheckLink refuses to link key to a session unless the key's
// installation is the session's own or in its tenant group: never across
// customers. A session created over the API belongs to no installation;
// the admin who links it decides.
func (s *Set) CheckLink(ctx context.Context, sess *core.Session, key string) error {
	if _, err := s.platforms.CheckKey(key); err != nil {
		return err
	}
	to, err := s.InstallationOfKey(ctx, key)
	if err != nil {
		return err
	}
	if sess.Origin == nil {
		return nil
	}
	from, err := s.InstallationOfKey(ctx, sess.Origin.Key)
	if err != nil {
		return fmt.Errorf("session %s's own installation: %w", sess.ID, err)
	}
	if AllowsLink(from, to) {
		return nil
	}
	return fmt.Errorf("key %q belongs to %s installation %s, which is not in a tenant group with %s installation %s, session %s's: %w",
		key, to.Provider, InstallationLabel(to), from.Provider, InstallationLabel(from), sess.ID, core.ErrForbidden)
}

// AllowsLink reports whether a session of installation from may be
// linked to a key of installation to: the same, or one tenant group.
func AllowsLink(from, to *core.Installation) bool {
	return from.ID == to.ID || from.TenantGroup != "" && from.TenantGroup == to.TenantGroup
}

// InstallationLabel names an installation in messages: its id and name.
func InstallationLabel(in *core.Installation) string {
	if in.Name != "" {
		return in.ID + " (" + in.Name + ")"
	}
	return in.ID
}

// URLKeyer is a provider that reads the key of a thread, issue or pull
// request from its address.
type URLKeyer interface {
	Provider
	KeyOfURL(ctx context.Context, u *url.URL) (key string, ok bool, err error)
}

// KeyOfURL is the origin key an address names, asking each provider.
func (s *Set) KeyOfURL(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%q is not a web address: %w", raw, core.ErrInvalid)
	}
	for _, p := range s.list {
		k, ok := p.(URLKeyer)
		if !ok {
			continue
		}
		key, ok, err := k.KeyOfURL(ctx, u)
		if err != nil {
			return "", err
		}
		if ok {
			return key, nil
		}
	}
	return "", fmt.Errorf("%s is not %s that this gateway serves: %w", raw, s.Threads(), core.ErrInvalid)
}

// Threads says what the addresses KeyOfURL reads name: "a GitHub issue or
// pull request, or a Slack thread".
func (s *Set) Threads() string {
	var names []string
	for _, p := range s.list {
		if _, ok := p.(URLKeyer); ok {
			names = append(names, p.Name())
		}
	}
	return s.platforms.Threads(names)
}
