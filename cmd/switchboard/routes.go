package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/docs"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/installations"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/memory"
	"github.com/switchboardhq/switchboard/sessions/schedules"
	"github.com/switchboardhq/switchboard/sessions/skills"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
	"github.com/switchboardhq/switchboard/sessions/surfaces/metrics"
	"github.com/switchboardhq/switchboard/sessions/surfaces/page"
	"github.com/switchboardhq/switchboard/sessions/vaults"
	"github.com/switchboardhq/switchboard/webhooks"
)

// runtimes says which runtimes besides the built-in loop this gateway
// runs: acp runs in the Docker sandbox.
func runtimes(sb *sandbox.Docker) func(core.AgentRuntime) error {
	return func(r core.AgentRuntime) error {
		if r.Kind == core.RuntimeACP && sb == nil {
			return fmt.Errorf("field \"runtime\": an agent of kind %s runs in the Docker sandbox, and this gateway runs none (SWITCHBOARD_SANDBOX is none, or no engine answered at start): %w", r.Kind, core.ErrInvalid)
		}
		return nil
	}
}

// routes mounts every package's handlers: the API, the session page and
// the console behind authentication, health and metrics in the open; a
// path or query that holds text no store keeps is refused first.
func routes(cfg *serveConfig, store backend.Store, hub *live.Hub, rt *runtime.Runtime, sr *schedules.Runner, m *metrics.Metrics, wh *webhooks.Service, gw *providers.Set, clients *models.Router, states *oauth.States, sb *sandbox.Docker, con *console.Handler, log *slog.Logger) http.Handler {
	a := &api.Auth{AdminToken: cfg.adminToken, Sessions: store, AttachTokens: store, Logger: log}
	v1 := http.NewServeMux()
	(&api.Handler{Store: store, Runtime: rt, Schedules: store, Links: gw, Repositories: gw, Models: clients, Destinations: wh, Environments: store, Sealer: cfg.sealer, StdioAllow: cfg.mcp.StdioAllow, Hub: hub, Logger: log, MaxBody: cfg.maxBody, Heartbeat: cfg.heartbeat, OnSSE: m.SSE, Runtimes: runtimes(sb), AttachTokens: store,
		Secrets:     (&vaults.Resolver{Store: store, Sealer: cfg.sealer, Logger: log}).CheckNotSecret,
		Credentials: (&vaults.Resolver{Store: store, Sealer: cfg.sealer, Logger: log}).CheckSession}).Register(v1)
	sandbox.RegisterEnvironments(v1, sb, store, store, cfg.maxBody, log)
	(&vaults.Handler{Store: store, Sealer: cfg.sealer, Logger: log, MaxBody: cfg.maxBody}).Register(v1)
	(&skills.Handler{Store: store, Logger: log, MaxBytes: cfg.skills.MaxBytes}).Register(v1)
	(&memory.Handler{Stores: store, Logger: log, MaxBody: cfg.maxBody}).Register(v1)
	(&schedules.Handler{Store: store, Openers: sr.Openers, Runner: sr, Clock: sr.Clock, Logger: log, MaxBody: cfg.maxBody}).Register(v1)
	(&webhooks.Handler{Service: wh, Logger: log, MaxBody: cfg.maxBody}).Register(v1)
	mux := http.NewServeMux()
	// The providers' webhooks and install flows are public (signed by the
	// platform, or tied to a signed state); /v1/installations is not.
	gw.Register(mux, cfg.publicURL, states)
	(&installations.Handler{Store: store, Agents: store, Revokers: gw.Revokers(), Logger: log, MaxBody: cfg.maxBody}).Register(v1)
	v1.Handle("/", web.Wrap(log, func(w http.ResponseWriter, r *http.Request) error {
		return web.Errorf(http.StatusNotFound, "not_found", "no endpoint %s %s", r.Method, r.URL.Path)
	}))

	api := a.Wrap(v1)
	mux.Handle("/v1/", api)
	(&page.Handler{Store: store, Auth: a, Logger: log}).Register(mux)
	con.Register(mux, api)
	// The docs of this version, in the open: the console links to them.
	con.RegisterDocs(mux, docs.Files())
	// The address alone is the console's: a person who opens it in a
	// browser lands where they can sign in.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		// Relative as written (http.Redirect would root it), so a gateway
		// served under a path prefix sends the browser to its own console.
		w.Header().Set("Location", "console/")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		status, ok := store.Ready(r.Context())
		code := http.StatusOK
		if !ok {
			code = http.StatusServiceUnavailable
		}
		web.WriteJSON(w, code, map[string]string{"status": status})
	})
	mux.Handle("GET /metrics", m.Handler())
	// An id, key or filter no store could hold finds nothing: refused
	// alike whichever store runs.
	return web.CheckRequestText(log, mux)
}
