// Package api serves the /v1 agent and session endpoints (docs/api.md):
// agents and their versions, sessions, their events (as pages and as an
// SSE stream), queued inputs, wake and archive.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
)

// Runtime is what the handlers need of the session runtime: queued inputs
// reach it through the store's commit stream, and POST …/wake asks for a
// cycle with nothing queued.
type Runtime interface {
	Wake(sessionID string)
}

// Environments is what the handlers need to refuse a session or agent
// that names an environment that does not exist.
type Environments interface {
	GetEnvironment(ctx context.Context, idOrName string) (*core.Environment, error)
}

// Handler serves the agent and session endpoints.
type Handler struct {
	Store   core.Store
	Runtime Runtime
	// Destinations, when set, lets a session's create body carry webhook
	// destinations (validated and sealed, then created with the session).
	Destinations core.SessionDestinationCreator
	// Environments, when set, are checked for the environment a session or
	// agent names.
	Environments Environments
	// Sealer seals the client token kept with an idempotent create's
	// answer, so a replay can return it and the store holds no usable token.
	Sealer core.Sealer
	// StdioAllow lists the executables an agent's stdio MCP servers may
	// name; an agent naming another is refused (the zero value allows none).
	StdioAllow mcpbridge.StdioAllow
	Hub        *live.Hub
	Logger     *slog.Logger
	// MaxBody bounds request bodies (default 1 MiB).
	MaxBody int64
	// Heartbeat is the SSE comment interval (default 15 s).
	Heartbeat time.Duration
	// OnSSE, when set, is told of a stream opening (+1) and closing (-1).
	OnSSE func(delta int)
	// Schedules, when set, tell a session's next_wake_at.
	Schedules core.ScheduleLister
	// Links, when set, decides which keys a session may be linked to;
	// without it links are refused.
	Links LinkChecker
	// Models, when set, refuses an agent whose model no client serves.
	Models ModelChecker
	// Runtimes, when set, refuses an agent whose runtime (other than the
	// built-in loop) this gateway cannot run, saying why.
	Runtimes func(core.AgentRuntime) error
	// Secrets, when set, refuses values that are vault secrets (an ACP
	// agent's runtime.env goes into its sandbox), naming field.
	Secrets func(ctx context.Context, field string, values map[string]string) error
	// Repositories, when set, checks an agent's repository_access against
	// the installation it names; without it such an agent is refused.
	Repositories RepositoryChecker
	// AttachTokens, when set, keeps the sessions' attach tokens: the
	// /v1/sessions/{id}/attach_tokens endpoints are mounted.
	AttachTokens core.AttachTokenStore
	// Credentials, when set, refuses a session whose agent or environment
	// names a vault credential of another owner than the session's
	// tenancy (vaults.Resolver.CheckSession); env is nil for none.
	Credentials func(ctx context.Context, t core.Tenancy, a *core.Agent, env *core.Environment) error
}

// ModelChecker says whether a model client serves a model
// (models.Router.Check); its error names the variable to set.
type ModelChecker interface {
	Check(model string) error
}

// checkModel refuses a model no client serves, as an invalid field.
// checkRuntime checks that this gateway can run a: the built-in loop
// needs a client and key for its model; another runtime must be one the
// gateway serves (Runtimes).
func (h *Handler) checkRuntime(ctx context.Context, a *core.Agent) error {
	if a.Runtime.KindOrDefault() == core.RuntimeBuiltin {
		return h.checkModel(a.Model)
	}
	if h.Runtimes != nil {
		if err := h.Runtimes(a.Runtime); err != nil {
			return err
		}
	}
	if h.Secrets != nil {
		return h.Secrets(ctx, "runtime.env", a.Runtime.Env)
	}
	return nil
}

func (h *Handler) checkModel(model string) error {
	if h.Models == nil {
		return nil
	}
	if err := h.Models.Check(model); err != nil {
		if errors.Is(err, core.ErrModelNotConfigured) {
			return fmt.Errorf("field \"model\": %s: %w", strings.TrimSuffix(err.Error(), ": "+core.ErrModelNotConfigured.Error()), core.ErrInvalid)
		}
		return err
	}
	return nil
}

// RepositoryChecker checks an agent's repository access
// (providers.Set.CheckRepositoryAccess).
type RepositoryChecker interface {
	CheckRepositoryAccess(ctx context.Context, ra *core.RepositoryAccess) error
}

// LinkChecker refuses a link across customers (providers.Set.CheckLink).
type LinkChecker interface {
	CheckLink(ctx context.Context, s *core.Session, key string) error
}

// Register mounts the endpoints on mux. Authentication happens before:
// every request carries a core.Principal.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.MaxBody <= 0 {
		h.MaxBody = 1 << 20
	}
	if h.Heartbeat <= 0 {
		h.Heartbeat = 15 * time.Second
	}
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	handle := func(pattern string, fn web.Handler) { mux.Handle(pattern, web.Wrap(h.Logger, fn)) }
	handle("POST /v1/agents", web.AdminOnly(h.createAgent))
	handle("GET /v1/agents", web.AdminOnly(h.listAgents))
	handle("GET /v1/agents/{id}", web.AdminOnly(h.getAgent))
	handle("POST /v1/agents/{id}", web.AdminOnly(h.updateAgent))
	handle("POST /v1/sessions", web.AdminOnly(h.createSession))
	handle("GET /v1/sessions", web.AdminOnly(h.listSessions))
	handle("GET /v1/sessions/{id}", h.getSession)
	handle("POST /v1/sessions/{id}", web.AdminOnly(h.updateSession))
	handle("GET /v1/sessions/{id}/events", h.events)
	handle("POST /v1/sessions/{id}/events", h.postEvents)
	handle("GET /v1/sessions/{id}/pending", h.pending)
	handle("POST /v1/sessions/{id}/wake", web.AdminOnly(h.wake))
	handle("POST /v1/sessions/{id}/archive", web.AdminOnly(h.archive))
	handle("POST /v1/sessions/{id}/fork", web.AdminOnly(h.fork))
	handle("POST /v1/sessions/{id}/links", web.AdminOnly(h.addLink))
	handle("DELETE /v1/sessions/{id}/links", web.AdminOnly(h.removeLink))
	if h.AttachTokens != nil {
		handle("POST /v1/sessions/{id}/attach_tokens", web.AdminOnly(h.createAttachToken))
		handle("GET /v1/sessions/{id}/attach_tokens", web.AdminOnly(h.listAttachTokens))
		handle("DELETE /v1/sessions/{id}/attach_tokens/{token}", web.AdminOnly(h.revokeAttachToken))
	}
}

// session loads the path's session if the principal may see it; a client
// token of another session gets the same 404 as a missing session.
func (h *Handler) session(r *http.Request) (*core.Session, error) {
	id := r.PathValue("id")
	p, ok := core.PrincipalFrom(r.Context())
	if !ok {
		return nil, web.Errorf(http.StatusUnauthorized, "unauthorized", "missing credentials")
	}
	if err := mayAct(p, id); err != nil {
		return nil, err
	}
	s, err := h.Store.GetSession(r.Context(), id)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// mayAct refuses a principal another session's: an attach token with a
// 403 (it is for one session, whichever this is), a client token with
// the 404 of a missing session.
func mayAct(p core.Principal, id string) error {
	switch {
	case p.MaySee(id):
		return nil
	case p.AttachToken != "":
		return web.OwnSessionOnly(p)
	}
	return notFound("session", id)
}

func notFound(kind, id string) error {
	return web.Errorf(http.StatusNotFound, "not_found", "%s %q not found", kind, id)
}

// background is for writes that must finish once the request was accepted.
func background(r *http.Request) context.Context { return context.WithoutCancel(r.Context()) }

// checkEnvironment refuses, with a 400 before anything is stored, an
// environment that does not exist.
func (h *Handler) checkRepositoryAccess(ctx context.Context, ra *core.RepositoryAccess) error {
	if ra == nil {
		return nil
	}
	if h.Repositories == nil {
		return fmt.Errorf("field \"repository_access\": no code host is configured here: %w", core.ErrInvalid)
	}
	return h.Repositories.CheckRepositoryAccess(ctx, ra)
}

func (h *Handler) checkEnvironment(ctx context.Context, name string) error {
	_, err := h.environment(ctx, name)
	return err
}

// environment is the environment name names (nil for none, or when
// environments are not checked here).
func (h *Handler) environment(ctx context.Context, name string) (*core.Environment, error) {
	if name == "" || h.Environments == nil {
		return nil, nil
	}
	env, err := h.Environments.GetEnvironment(ctx, name)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return nil, fmt.Errorf("field \"environment\": no environment %q: %w", name, core.ErrInvalid)
		}
		return nil, err
	}
	return env, nil
}

// checkCredentials refuses a new session (id, of tenant) whose agent or
// environment (the session's, else the agent's) names a credential the
// session may not use. A session created here has no installation, so
// no tenant group.
func (h *Handler) checkCredentials(ctx context.Context, id, tenant string, a *core.Agent, envName string) error {
	if h.Credentials == nil {
		return nil
	}
	if envName == "" {
		envName = a.Environment
	}
	env, err := h.environment(ctx, envName)
	if err != nil {
		return err
	}
	return h.Credentials(ctx, core.Tenancy{Session: id, Tenant: tenant}, a, env)
}
