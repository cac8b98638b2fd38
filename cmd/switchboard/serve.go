package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/harness"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/outbox"
	"github.com/switchboardhq/switchboard/sessions"
	"github.com/switchboardhq/switchboard/sessions/live"
	"github.com/switchboardhq/switchboard/sessions/metrics"
	"github.com/switchboardhq/switchboard/sessions/runtime"
	"github.com/switchboardhq/switchboard/sessions/vaults"
)

const defaultSystem = "You are a helpful agent working with a team in their chat, issue tracker and code host. Be concise. Use the say tool for progress updates on long work, and the ask tool when you cannot continue without an answer."

// serveConfig is what serve runs with, validated.
type serveConfig struct {
	addr, dataDir, publicURL    string
	adminToken, masterKey       string
	model                       string
	workers                     int
	limits                      core.Limits
	contextWindow               int
	compactFraction             float64
	shutdown                    time.Duration
	maxBody                     int64
	heartbeat                   time.Duration
	sandbox                     sandboxConfig
	webhooks                    webhookConfig
	slack                       slackConfig
	github                      githubConfig
	linear                      linearConfig
	log                         *slog.Logger
	sealer                      *oauth.Sealer
	adminTokenNew, masterKeyNew bool
}

func loadServeConfig(args []string, getenv func(string) string, stderr *os.File) (*serveConfig, error) {
	s, _, err := parseSettings("serve", append(append(append(serveOptions[:len(serveOptions):len(serveOptions)], slackOptions...), githubOptions...), linearOptions...), args, getenv)
	if err != nil {
		return nil, err
	}
	c := &serveConfig{addr: s["SWITCHBOARD_ADDR"], publicURL: s["SWITCHBOARD_PUBLIC_URL"], model: s["SWITCHBOARD_MODEL"]}
	if c.log, err = s.logger(stderr); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_ADDR=%q: want host:port", c.addr)
	}
	if c.model != "" {
		if _, _, err := core.SplitModel(c.model); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_MODEL: %w", err)
		}
	}
	if c.workers, err = s.int("SWITCHBOARD_WORKERS", 1); err != nil {
		return nil, err
	}
	if c.limits.MaxSteps, err = s.int("SWITCHBOARD_MAX_STEPS", 1); err != nil {
		return nil, err
	}
	if c.limits.TurnSeconds, err = s.int("SWITCHBOARD_TURN_SECONDS", 1); err != nil {
		return nil, err
	}
	maxTokens, err := s.int("SWITCHBOARD_MAX_TOKENS", 1)
	if err != nil {
		return nil, err
	}
	c.limits.MaxTokens = int64(maxTokens)
	if c.contextWindow, err = s.int("SWITCHBOARD_CONTEXT_WINDOW", 0); err != nil {
		return nil, err
	}
	if c.compactFraction, err = s.float("SWITCHBOARD_COMPACT_FRACTION", 0, 1); err != nil {
		return nil, err
	}
	if c.shutdown, err = s.duration("SWITCHBOARD_SHUTDOWN_SECONDS"); err != nil {
		return nil, err
	}
	if c.heartbeat, err = s.duration("SWITCHBOARD_SSE_HEARTBEAT_SECONDS"); err != nil {
		return nil, err
	}
	maxBody, err := s.int("SWITCHBOARD_MAX_BODY_BYTES", 1024)
	if err != nil {
		return nil, err
	}
	c.maxBody = int64(maxBody)
	if c.dataDir, err = dataDir(s["SWITCHBOARD_DATA_DIR"]); err != nil {
		return nil, err
	}
	if c.sandbox, err = loadSandboxConfig(s, c.dataDir); err != nil {
		return nil, err
	}
	if c.webhooks, err = loadWebhookConfig(s); err != nil {
		return nil, err
	}
	if c.slack, err = loadSlackConfig(s); err != nil {
		return nil, err
	}
	if c.github, err = loadGitHubConfig(s); err != nil {
		return nil, err
	}
	if c.linear, err = loadLinearConfig(s); err != nil {
		return nil, err
	}
	c.adminToken = s["SWITCHBOARD_ADMIN_TOKEN"]
	if c.adminToken == "" {
		if c.adminToken, c.adminTokenNew, err = secretFile(filepath.Join(c.dataDir, "admin-token")); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_ADMIN_TOKEN: %w", err)
		}
	}
	c.masterKey = s["SWITCHBOARD_MASTER_KEY"]
	if c.masterKey == "" {
		if c.masterKey, c.masterKeyNew, err = secretFile(filepath.Join(c.dataDir, "master.key")); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_MASTER_KEY: %w", err)
		}
	}
	if c.sealer, err = oauth.NewSealer(c.masterKey); err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_MASTER_KEY: %w", err)
	}
	if !c.github.enabled {
		if c.github, err = storedGitHubConfig(c.github, s, c.dataDir, c.sealer); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// contextWindow gives a model's window: the configured one, else a
// conservative default per provider.
func (c *serveConfig) contextWindowFor(model string) int {
	if c.contextWindow > 0 {
		return c.contextWindow
	}
	if p, _, _ := core.SplitModel(model); p == "openai" {
		return 128_000
	}
	return 200_000
}

// serve runs the gateway until SIGTERM or SIGINT.
func serve(args []string, getenv func(string) string, stdout io.Writer, stderr *os.File) error {
	cfg, err := loadServeConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := cfg.log
	if err := checkSlackToken(cfg.slack); err != nil {
		return err
	}
	db, err := sessions.Open(filepath.Join(cfg.dataDir, "switchboard.db"), sessions.Options{Logger: log})
	if err != nil {
		if errors.Is(err, core.ErrLocked) {
			return fmt.Errorf("another switchboard is already serving SWITCHBOARD_DATA_DIR=%s: %w", cfg.dataDir, err)
		}
		return fmt.Errorf("open store: %w", err)
	}
	defer db.Close()
	ctx := context.Background()
	grants := &platformGrants{sessions: db, vault: &vaults.Resolver{Store: db, Sealer: cfg.sealer, Logger: log}}
	sb, egressLog, err := openSandbox(ctx, cfg.sandbox, db, grants, log)
	if err != nil {
		return err
	}
	mcp := mcpbridge.New(mcpbridge.Config{
		Credentials: &vaults.Resolver{Store: db, Sealer: cfg.sealer, Logger: log},
		Logger:      log,
		ClientInfo:  mcpbridge.ClientInfo{Name: "switchboard", Version: version},
	})
	defer mcp.Shutdown()
	archiving := archivingStore{Store: db, log: log, release: []func(context.Context, string) error{
		func(_ context.Context, id string) error { mcp.Close(id); return nil },
	}}
	model := core.Model(models.FromEnv(getenv, log))
	if sb != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdown)
			defer cancel()
			if err := sb.Close(sctx); err != nil {
				log.Warn("close sandbox backend", "err", err)
			}
		}()
		archiving.release = append(archiving.release, sb.Remove)
	} else {
		model = noteModel{Model: model, note: noSandboxNote}
	}
	var base core.Store = archiving
	store := &live.Store{Store: base, Hub: live.NewHub()}
	// Appends go through wh's wrapper so that each one wakes the delivery
	// of the webhooks it queued.
	wh := newWebhooks(cfg, db, log)
	egressLog.attach(wh.Wrap(store))
	m := metrics.New(store, log)
	if err := ensureDefaultAgent(ctx, store, cfg.model, log); err != nil {
		return err
	}
	// Listen before the providers take the public URL: by default it is
	// the address bound, which SWITCHBOARD_ADDR's port 0 leaves open.
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	lrt := &lateRuntime{}
	gw, err := buildProviders(cfg, store, db, lrt, getenv, log)
	if err != nil {
		return err
	}
	grants.bind(gw)
	// The runtime's appends also reach the providers' output sinks, which
	// mark a turn before it starts so a crash cannot lose its output.
	runStore := outbox.Wrap(wh.Wrap(store), gw.sinks...)
	if cfg.adminTokenNew {
		fmt.Fprintf(stdout, "admin token (saved in %s, shown once): %s\n", filepath.Join(cfg.dataDir, "admin-token"), cfg.adminToken)
	}

	rt := runtime.New(runtime.Config{
		Store:   testStore(runStore, getenv),
		Harness: &harness.Default{Observer: m},
		Model:   model,
		Tools:   toolsetFor(getenv, handsTools(sb, cfg.sandbox), mcp, gw, runStore, log),
		// Idle sessions let go of their MCP connections after a while.
		AfterCycle:      mcp.Idle,
		Workers:         cfg.workers,
		Limits:          cfg.limits,
		ContextWindow:   cfg.contextWindowFor,
		CompactFraction: cfg.compactFraction,
		Logger:          log,
	})
	lrt.rt = rt
	if err := gw.start(ctx); err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		gw.stop(ctx)
		return err
	}

	srv := &http.Server{
		Handler:           routes(cfg, store, db, rt, m, wh, gw, sandboxRoutes{sb, db}, log),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	wh.Start(ctx)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("switchboard serving", "addr", ln.Addr().String(), "data_dir", cfg.dataDir, "public_url", cfg.publicURL)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		log.Info("stopping", "signal", s.String())
	case err := <-serveErr:
		_ = rt.Stop(ctx)
		return fmt.Errorf("http server: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.shutdown)
	defer cancel()
	// Stop taking requests first, then checkpoint the turns in flight: they
	// stay open in the log and resume at the next start.
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if err := rt.Stop(sctx); err != nil {
		log.Warn("runtime stop", "err", err)
	}
	gw.stop(sctx)
	// Attempts cut short stay due and are made again at the next start.
	if err := wh.Stop(sctx); err != nil {
		log.Warn("webhooks stop", "err", err)
	}
	log.Info("stopped")
	return nil
}

// ensureDefaultAgent creates the agent named default from SWITCHBOARD_MODEL,
// or adds a version when the model changed.
func ensureDefaultAgent(ctx context.Context, store core.AgentStore, model string, log *slog.Logger) error {
	if model == "" {
		return nil
	}
	a, err := store.GetAgent(ctx, "default")
	switch {
	case errors.Is(err, core.ErrNotFound):
		a, err = store.CreateAgent(ctx, &core.Agent{Name: "default", Model: model, System: defaultSystem})
		if err != nil {
			return fmt.Errorf("create the default agent: %w", err)
		}
		log.Info("created the default agent", "agent_id", a.ID, "model", model)
	case err != nil:
		return fmt.Errorf("read the default agent: %w", err)
	case a.Model != model:
		a, err = store.UpdateAgent(ctx, a.ID, a.Version, func(a *core.Agent) error { a.Model = model; return nil })
		if err != nil {
			return fmt.Errorf("update the default agent: %w", err)
		}
		log.Info("default agent model changed", "agent_id", a.ID, "version", a.Version, "model", model)
	}
	return nil
}
