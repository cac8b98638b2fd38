package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/netguard"
	"github.com/switchboardhq/switchboard/core/web"
)

// Bounds of a destination's create body.
const (
	maxURL   = 2048
	maxTypes = 32
	// MaxSessionDestinations bounds the destinations of one session create.
	MaxSessionDestinations = 10
)

// knownType reports whether t is an event type a session's log can hold
// (docs/api.md#events), the ones a type filter may name.
func knownType(t string) bool {
	switch t {
	case core.TypeUserMessage, core.TypeUserInterrupt, core.TypeUserToolConfirmation, core.TypeUserCustomToolResult, core.TypeUserRetry,
		core.TypeStatusChanged, core.TypeTurnStarted, core.TypeTurnCompleted, core.TypeAgentMessage,
		core.TypeAgentToolUse, core.TypeAgentToolResult, core.TypeAgentCustomToolUse, core.TypeCompacted, core.TypeError,
		core.TypeSandboxReset, core.TypeLinkAdded, core.TypeLinkRemoved, core.TypeAgentPlan, core.TypeRuntimeStarted, core.TypeAgentMessageDelta,
		core.TypeAttachmentsFetched:
		return true
	}
	return false
}

// checkURL validates a destination url. An IP literal that the guard
// would refuse is refused now; hostnames are judged at connect time.
func (s *Service) checkURL(field, raw string) (string, error) {
	if raw == "" {
		return "", web.Invalid("field %q is required: the URL deliveries are POSTed to", field)
	}
	if len(raw) > maxURL {
		return "", web.Invalid("field %q is longer than %d bytes", field, maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", web.Invalid("field %q: %q is not an absolute http or https URL", field, raw)
	}
	if u.Fragment != "" {
		return "", web.Invalid("field %q: a URL fragment is never sent; remove it", field)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !s.cfg.AllowPrivate {
		if err := netguard.CheckAddr(ip); err != nil {
			return "", web.Invalid("field %q: %v (private destinations are not allowed on this server)", field, err)
		}
	}
	return u.String(), nil
}

// prepare validates one destination body and seals its secret. field
// prefixes the names in error messages ("destinations[0].").
func (s *Service) prepare(ctx context.Context, field, sessionID string, spec core.DestinationSpec, now core.Time) (core.NewDestination, core.CreatedDestination, error) {
	var nd core.NewDestination
	var shown core.CreatedDestination
	u, err := s.checkURL(field+"url", spec.URL)
	if err != nil {
		return nd, shown, err
	}
	level, err := core.ParseLevel(string(spec.Level))
	if err != nil {
		return nd, shown, web.Invalid("field %q: %v", field+"level", err)
	}
	if len(spec.Types) > maxTypes {
		return nd, shown, web.Invalid("field %q has %d types; at most %d", field+"types", len(spec.Types), maxTypes)
	}
	types := []string{}
	for _, t := range spec.Types {
		if !knownType(t) {
			return nd, shown, web.Invalid("field %q: unknown event type %q", field+"types", t)
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	agentID := ""
	switch {
	case spec.Agent != "" && sessionID != "":
		return nd, shown, web.Invalid("field %q: a session's destination follows that session and takes no agent", field+"agent")
	case spec.Agent != "":
		a, err := s.cfg.Store.GetAgent(ctx, spec.Agent)
		if errors.Is(err, core.ErrNotFound) {
			return nd, shown, web.Errorf(http.StatusNotFound, "not_found", "agent %q not found", spec.Agent)
		}
		if err != nil {
			return nd, shown, err
		}
		agentID = a.ID
	}
	secret, generated := spec.Secret, false
	switch secret {
	case "", generateKeyword:
		secret, generated = GenerateSecret(), true
	default:
		if err := CheckSecret(secret); err != nil {
			return nd, shown, web.Invalid("field %q: %v", field+"secret", err)
		}
	}
	id := core.NewID(core.PrefixDestination)
	sealed, err := s.cfg.Sealer.Seal([]byte(secret), []byte(id))
	if err != nil {
		return nd, shown, fmt.Errorf("seal the secret of %s: %w", id, err)
	}
	d := core.Destination{
		ID: id, URL: u, SessionID: sessionID, AgentID: agentID, Level: level, Types: types,
		Status: core.DestinationActive, CreatedAt: now, UpdatedAt: now,
	}
	shown.Destination = d
	if generated {
		shown.Secret = secret
	}
	return core.NewDestination{Destination: d, SealedSecret: sealed}, shown, nil
}

// PrepareDestinations validates a session create body's destinations and
// seals their secrets (core.SessionDestinationCreator).
func (s *Service) PrepareDestinations(ctx context.Context, sessionID string, specs []core.DestinationSpec) ([]core.NewDestination, []core.CreatedDestination, error) {
	if len(specs) > MaxSessionDestinations {
		return nil, nil, web.Invalid("field \"destinations\" has %d entries; at most %d", len(specs), MaxSessionDestinations)
	}
	now := core.Now()
	nds := make([]core.NewDestination, 0, len(specs))
	shown := make([]core.CreatedDestination, 0, len(specs))
	for i, spec := range specs {
		nd, sh, err := s.prepare(ctx, fmt.Sprintf("destinations[%d].", i), sessionID, spec, now)
		if err != nil {
			return nil, nil, err
		}
		nds, shown = append(nds, nd), append(shown, sh)
	}
	return nds, shown, nil
}

var _ core.SessionDestinationCreator = (*Service)(nil)

// CreateSessionAndDestinations creates the session and its destinations
// in one transaction of the store.
func (s *Service) CreateSessionAndDestinations(ctx context.Context, req core.NewSession, dests []core.NewDestination) (*core.CreateResult, error) {
	return s.cfg.Store.CreateSessionAndDestinations(ctx, req, dests)
}
