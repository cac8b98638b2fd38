package core

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// PrefixInstallation is the id prefix of installations.
const PrefixInstallation = "ins"

// AccessPolicy says who may trigger an installation's agent. An empty list
// allows everyone: Channels restricts where, Users restricts who.
type AccessPolicy struct {
	Channels []string `json:"channels"`
	Users    []string `json:"users"`
}

// MarshalJSON writes empty lists as [], not null: "everyone".
func (p AccessPolicy) MarshalJSON() ([]byte, error) {
	type plain AccessPolicy
	q := plain(p)
	if q.Channels == nil {
		q.Channels = []string{}
	}
	if q.Users == nil {
		q.Users = []string{}
	}
	return json.Marshal(q)
}

// Allows reports whether user may trigger the agent in channel.
func (p AccessPolicy) Allows(channel, user string) bool {
	return p.allowsChannel(channel) && (len(p.Users) == 0 || slices.Contains(p.Users, user))
}

func (p AccessPolicy) allowsChannel(channel string) bool {
	return len(p.Channels) == 0 || slices.Contains(p.Channels, channel)
}

// CheckPostChannel is the one check of where the agent may post on its
// own (a platform tool's post to another channel, a schedule's post):
// only in a channel of the installation's policy, when it names
// channels. The refusal wraps ErrInvalid and names the policy.
func (in *Installation) CheckPostChannel(channel string) error {
	if in.Policy.allowsChannel(channel) {
		return nil
	}
	return fmt.Errorf("channel %s is outside the channel policy of installation %s (policy.channels): the agent posts only in the channels it may be triggered in: %w", channel, in.ID, ErrInvalid)
}

// Installation is the gateway installed into one tenant of a platform: a
// Slack workspace (or an Enterprise Grid organization), a GitHub App
// installation, a Linear organization. Its tokens are stored sealed apart
// from it and never appear in it.
type Installation struct {
	ID       string `json:"id"`
	Provider string `json:"provider"` // "slack", "github", "linear"
	// ExternalID names the tenant on the platform (a Slack team id, or the
	// enterprise id of an organization-wide install); one installation per
	// provider and external id.
	ExternalID string `json:"external_id"`
	Name       string `json:"name,omitempty"`
	// Agent is the id of the agent its new sessions run; empty means the
	// agent named default.
	Agent  string       `json:"agent,omitempty"`
	Policy AccessPolicy `json:"policy"`
	// BudgetApprovers are the platform users (Slack user ids, GitHub
	// logins, Linear user ids) who may set a session's budget from its
	// thread ("budget $5"); none by default.
	BudgetApprovers []string `json:"budget_approvers,omitempty"`
	// TenantGroup puts installations of one customer together: a session
	// may be linked to keys of its own installation, or of one in its
	// tenant group; none by default.
	TenantGroup string   `json:"tenant_group,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	// Metadata holds what the provider learned at install time that is not
	// secret (a Slack bot user id, the workspace URL).
	Metadata map[string]string `json:"metadata,omitempty"`
	// HasToken is false once the tokens were revoked or forgotten.
	HasToken       bool  `json:"has_token"`
	TokenExpiresAt *Time `json:"token_expires_at,omitempty"`
	CreatedAt      Time  `json:"created_at"`
	UpdatedAt      Time  `json:"updated_at"`
}

// Clone is a copy of in that shares nothing with it: its lists, metadata
// and expiry may be changed without changing in.
func (in *Installation) Clone() *Installation {
	c := *in
	c.Policy.Channels = slices.Clone(in.Policy.Channels)
	c.Policy.Users = slices.Clone(in.Policy.Users)
	c.BudgetApprovers = slices.Clone(in.BudgetApprovers)
	c.Scopes = slices.Clone(in.Scopes)
	c.Metadata = maps.Clone(in.Metadata)
	c.TokenExpiresAt = clonePtr(in.TokenExpiresAt)
	return &c
}

// InstallationAAD is the aad an installation's tokens are sealed with: the
// provider and external id, which a record keeps across reinstalls, so
// tokens can be sealed before the store has assigned an id.
func InstallationAAD(provider, externalID string) []byte {
	return []byte("installation:" + provider + ":" + externalID)
}

// InstallationQuery selects installations in a list (id order).
type InstallationQuery struct {
	Provider string
	After    string
	Limit    int
}

// InstallationStore keeps installations and their sealed tokens.
type InstallationStore interface {
	// SaveInstallation creates the installation of in's provider and
	// external id, or updates the one that exists: name, scopes and
	// metadata are replaced, its id, agent, policy and creation time kept.
	// sealed, when not nil, replaces its tokens (sealed with
	// InstallationAAD), and tokenExpiresAt with them.
	SaveInstallation(ctx context.Context, in *Installation, sealed []byte, tokenExpiresAt *Time) (*Installation, error)
	GetInstallation(ctx context.Context, id string) (*Installation, error)
	// FindInstallation returns the installation of a provider's tenant.
	FindInstallation(ctx context.Context, provider, externalID string) (*Installation, error)
	ListInstallations(ctx context.Context, q InstallationQuery) ([]*Installation, bool, error)
	// UpdateInstallation applies fn to the record (agent, policy); the
	// store keeps id, provider, external id, tokens and times.
	UpdateInstallation(ctx context.Context, id string, fn func(*Installation) error) (*Installation, error)
	// InstallationTokens returns the sealed tokens (ErrNotFound when none).
	InstallationTokens(ctx context.Context, id string) ([]byte, error)
	// PutInstallationTokens replaces the sealed tokens (a refresh).
	PutInstallationTokens(ctx context.Context, id string, sealed []byte, expiresAt *Time) error
	// RefreshInstallationTokens renews the tokens one caller at a time,
	// across every process sharing the store: Slack's rotating refresh
	// tokens and Linear's are single-use, so two callers must never spend
	// the same one. Holding the installation's refresh lock, it reads the
	// sealed tokens, runs refresh with them and stores what refresh
	// returns (with its expiry), even when ctx ends meanwhile: the
	// platform has spent the old ones. A caller that waited for the lock
	// gets the tokens the previous holder stored; refresh returns nil to
	// keep the current ones (renewed meanwhile), and an error to leave
	// them as they were. No transaction is open while refresh calls the
	// platform, and refresh must not use the store. It returns the
	// tokens stored when it ends; an installation without tokens is
	// ErrNotFound, and refresh is not run; an empty next is ErrInvalid.
	RefreshInstallationTokens(ctx context.Context, id string, refresh func(current []byte) (next []byte, expiresAt *Time, err error)) ([]byte, error)
	// ForgetInstallationTokens deletes the tokens and keeps the record
	// (the app was uninstalled; a reinstall finds its binding and policy).
	ForgetInstallationTokens(ctx context.Context, id string) error
	// DeleteInstallation deletes the record and its tokens.
	DeleteInstallation(ctx context.Context, id string) error
}

// RunRefresh runs a RefreshInstallationTokens callback for a store, with
// the current tokens of installation id, and checks what it gives back:
// next is nil when the current tokens are to be kept; empty tokens are
// ErrInvalid. Both stores answer the same through it.
func RunRefresh(id string, current []byte, refresh func(current []byte) (next []byte, expiresAt *Time, err error)) ([]byte, *Time, error) {
	next, expiresAt, err := refresh(current)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("refresh tokens of installation %s: %w", id, err)
	case next != nil && len(next) == 0:
		return nil, nil, fmt.Errorf("refresh installation tokens: empty: %w", ErrInvalid)
	}
	return next, expiresAt, nil
}

// OnceStore remembers keys for a while: OAuth states that may be redeemed
// once, notices a person should get once.
type OnceStore interface {
	// Once records key until the given time and reports whether it is new;
	// a key recorded before and not yet expired reports false.
	Once(ctx context.Context, key string, until time.Time) (bool, error)
}

// SinkPosition is how far a provider's output sink has rendered a
// session's log, with the sink's own state (a status message to edit, a
// post it announced but has not confirmed).
type SinkPosition struct {
	Seq   uint64          `json:"seq"`
	State json.RawMessage `json:"state,omitempty"`
}

// SinkStore keeps output sinks' positions, and which sessions each sink
// may still be behind on, so a restart resumes exactly those. A sink's
// output of one session is claimed as a whole by one holder at a time (a
// Claim), so replicas sharing the store render each session once, in
// order; expiry is judged by the store's clock.
type SinkStore interface {
	// SinkPosition returns the position (zero when none was saved).
	SinkPosition(ctx context.Context, sink, sessionID string) (SinkPosition, error)
	// SaveSinkPosition stores p for the holder of claim c. It is refused
	// with ErrLeaseLost, in the write's own transaction, when the
	// stream's claim has another epoch than c's: another holder claimed
	// it since. The zero Claim writes only to a stream never claimed.
	SaveSinkPosition(ctx context.Context, sink, sessionID string, c Claim, p SinkPosition) error
	// ClaimSink grants holder the sink's output of the session for ttl,
	// unless another holder's claim is live: then ok is false. Every
	// grant, a holder's own again included, has a higher epoch than any
	// the stream had, so writes of earlier grants are refused from now on.
	ClaimSink(ctx context.Context, sink, sessionID, holder string, ttl time.Duration) (c Claim, ok bool, err error)
	// RenewSinkClaim extends claim c by ttl; ErrLeaseLost when another
	// holder claimed the stream since, or c was released.
	RenewSinkClaim(ctx context.Context, sink, sessionID string, c Claim, ttl time.Duration) error
	// ReleaseSinkClaim ends claim c now, so another holder may claim the
	// stream at once; a claim already lost is left alone.
	ReleaseSinkClaim(ctx context.Context, sink, sessionID string, c Claim) error
	// ReleaseSink unmarks a session the sink has rendered up to and
	// including seq rendered, in one transaction with the check that
	// nothing was logged after it: a turn that started meanwhile (and
	// marked the session again, see Append) keeps it marked, and released
	// is false. The store marks a session for the sink named by its origin
	// provider in the transaction that logs a turn.started.
	ReleaseSink(ctx context.Context, sink, sessionID string, rendered uint64) (released bool, err error)
	// ActiveSinkSessions lists the marked sessions of a sink.
	ActiveSinkSessions(ctx context.Context, sink string) ([]string, error)
}

// InstallationLister lists installations a page at a time.
type InstallationLister interface {
	ListInstallations(ctx context.Context, q InstallationQuery) ([]*Installation, bool, error)
}

// FindInstallationWhere is the first installation of provider, in id
// order, that match accepts; ErrNotFound when none does.
func FindInstallationWhere(ctx context.Context, l InstallationLister, provider string, match func(*Installation) bool) (*Installation, error) {
	var found *Installation
	err := EachItem(func(after string) ([]*Installation, bool, error) {
		return l.ListInstallations(ctx, InstallationQuery{Provider: provider, After: after, Limit: 1000})
	}, func(in *Installation) string { return in.ID }, func(in *Installation) bool {
		if match(in) {
			found = in
		}
		return found == nil
	})
	if err == nil && found == nil {
		err = fmt.Errorf("no %s installation that fits: %w", provider, ErrNotFound)
	}
	return found, err
}
