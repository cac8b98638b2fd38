package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/httpserver"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/memtrim"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/core/models/embeddings"
	"github.com/switchboardhq/switchboard/core/pricing"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sandbox/checkout"
	"github.com/switchboardhq/switchboard/sessions/engine/acpclient"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/memory"
	"github.com/switchboardhq/switchboard/sessions/schedules"
	"github.com/switchboardhq/switchboard/sessions/skills"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
	"github.com/switchboardhq/switchboard/sessions/surfaces/metrics"
	"github.com/switchboardhq/switchboard/sessions/vaults"
	"github.com/switchboardhq/switchboard/sessions/webtools"
	"github.com/switchboardhq/switchboard/webhooks"
)

// serveConfig is what serve runs with, validated.
type serveConfig struct {
	// settings are every setting as read, for what the console shows of
	// them (its installations' checklists).
	settings                 settings.Values
	addr, dataDir, publicURL string
	adminToken, masterKey    string
	model                    string
	shutdown                 time.Duration
	maxBody                  int64
	heartbeat                time.Duration
	runtime                  runtime.Config
	mcp                      mcpbridge.Config
	sandbox                  sandbox.Settings
	webhooks                 webhooks.Config
	store                    backend.Config
	http                     httpserver.Config
	builds                   []providers.Build
	skills                   skills.Config
	prices                   *pricing.Table
	images                   models.Images
	embedder                 *embeddings.Client // nil: memory search by words
	attachments              attach.Config
	web                      webtools.Config
	acp                      *acpclient.Harness
	log                      *slog.Logger
	sealer                   *oauth.Sealer

	// adminTokenGenerated: the token is the data directory's, not
	// SWITCHBOARD_ADMIN_TOKEN; serve prints it until a start has.
	adminTokenGenerated bool
}

func loadServeConfig(args []string, env command.Env, stderr io.Writer) (*serveConfig, error) {
	getenv := env.Getenv
	s, err := settings.Parse("serve", allServeOptions(), args, getenv, env.Stdout)
	if err != nil {
		return nil, err
	}
	c := &serveConfig{settings: s, addr: s["SWITCHBOARD_ADDR"], publicURL: strings.TrimRight(s["SWITCHBOARD_PUBLIC_URL"], "/"), model: s["SWITCHBOARD_MODEL"]}
	if c.log, err = s.Logger(stderr); err != nil {
		return nil, err
	}
	warnUnknown(env, c.log)
	// Checked before anything is written (the data directory, keys).
	if err := checkAddr(c.addr); err != nil {
		return nil, err
	}
	if c.publicURL != "" {
		if _, err := s.URL("SWITCHBOARD_PUBLIC_URL"); err != nil {
			return nil, err
		}
	}
	if c.model != "" {
		if _, _, err := core.SplitModel(c.model); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_MODEL: %w", err)
		}
		if _, err := models.FromEnv(getenv, nil).For(c.model); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_MODEL: %w", err)
		}
	}
	if s["SWITCHBOARD_ADMIN_TOKEN"] != "" {
		// A token given, not generated: short ones are guessed.
		switch n := len(s["SWITCHBOARD_ADMIN_TOKEN"]); {
		case n < 16:
			return nil, fmt.Errorf("SWITCHBOARD_ADMIN_TOKEN has %d characters: want at least 16 (32 random ones, as the generated token has)", n)
		case n < 32:
			c.log.Warn(fmt.Sprintf("SWITCHBOARD_ADMIN_TOKEN has %d characters: 32 or more random ones are safer", n))
		}
	}
	if c.mcp, err = mcpbridge.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.shutdown, err = s.Duration("SWITCHBOARD_SHUTDOWN_SECONDS"); err != nil {
		return nil, err
	}
	if c.heartbeat, err = s.Duration("SWITCHBOARD_SSE_HEARTBEAT_SECONDS"); err != nil {
		return nil, err
	}
	maxBody, err := s.Int("SWITCHBOARD_MAX_BODY_BYTES", 1024)
	if err != nil {
		return nil, err
	}
	c.maxBody = int64(maxBody)
	if c.dataDir, err = s.Dir("SWITCHBOARD_DATA_DIR"); err != nil {
		return nil, err
	}
	if c.runtime, err = runtime.LoadConfig(s, c.dataDir); err != nil {
		return nil, err
	}
	if c.sandbox, err = sandbox.LoadSettings(s, c.dataDir); err != nil {
		return nil, err
	}
	if c.webhooks, err = webhooks.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.http, err = httpserver.Load(s); err != nil {
		return nil, err
	}
	if c.store, err = backend.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.skills, err = skills.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.prices, err = pricing.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.images, err = models.LoadImages(s, getenv); err != nil {
		return nil, err
	}
	if c.embedder, err = embeddings.Load(s, getenv); err != nil {
		return nil, err
	}
	if c.attachments, err = attach.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.web, err = webtools.LoadConfig(s); err != nil {
		return nil, err
	}
	if c.acp, err = acpclient.LoadHarness(s); err != nil {
		return nil, err
	}
	c.acp.TextEvery = c.runtime.TextEvery
	if c.store.Postgres() {
		// Processes sharing a database share these: each would generate
		// its own into its data dir.
		for _, name := range []string{"SWITCHBOARD_ADMIN_TOKEN", "SWITCHBOARD_MASTER_KEY"} {
			if s[name] == "" {
				return nil, fmt.Errorf("%s is required when SWITCHBOARD_STORE is a PostgreSQL database", name)
			}
		}
	}
	// A start that fails after these leaves the files behind; the next
	// start reuses them as they are (docs/operations.md, per file).
	if c.adminToken, _, err = s.Secret("SWITCHBOARD_ADMIN_TOKEN", filepath.Join(c.dataDir, "admin-token")); err != nil {
		return nil, err
	}
	c.adminTokenGenerated = s["SWITCHBOARD_ADMIN_TOKEN"] == ""
	if c.masterKey, _, err = s.Secret("SWITCHBOARD_MASTER_KEY", filepath.Join(c.dataDir, "master.key")); err != nil {
		return nil, err
	}
	if c.sealer, err = oauth.NewSealer(c.masterKey); err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_MASTER_KEY: %w", err)
	}
	if c.builds, err = providers.Load(modules(), s, providers.LoadEnv{DataDir: c.dataDir, Sealer: c.sealer}); err != nil {
		return nil, err
	}
	return c, nil
}

// serve runs the gateway until SIGTERM or SIGINT, or until stop ends (the
// playground stops the gateway it runs).
func serve(stop context.Context, args []string, env command.Env, stdout, stderr io.Writer) error {
	getenv := env.Getenv
	cfg, err := loadServeConfig(args, env, stderr)
	if err != nil {
		return err
	}
	log := cfg.log
	ctx := context.Background()
	db, err := backend.Open(ctx, cfg.store, backend.Env{DataDir: cfg.dataDir, KeyCheck: cfg.sealer.KeyCheck(), LeaseTTL: cfg.runtime.LeaseTTL, Logger: log})
	if err != nil {
		return err
	}
	defer db.Close()
	clients := models.FromEnv(getenv, log)
	model := core.Model(clients)
	if err := bolt.EnsureDefaultAgent(ctx, db, cfg.model, bolt.DefaultSystem, log); err != nil {
		return err
	}
	if a, err := db.GetAgent(ctx, "default"); err == nil {
		// Found now, not at its first turn in a thread.
		if err := clients.Check(a.Model); err != nil {
			return fmt.Errorf("the agent named default: %w", err)
		}
	}
	if err := bolt.WarnStoredAgents(ctx, db, log); err != nil {
		return err
	}
	states, err := oauth.NewStates(cfg.masterKey, db)
	if err != nil {
		return err
	}
	// Listen before the providers take the public URL: by default it is
	// the address bound, which SWITCHBOARD_ADDR's port 0 leaves open.
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	// One id names this replica in the store, across its restarts: the
	// runtime's leases on sessions, the output sinks' claims on their
	// platform output and the dispatcher's on delivery streams.
	holder := cfg.runtime.Holder
	intake := &providers.Intake{Store: db, Logger: log.With("component", "intake"), AttachTokens: api.Issuer{Store: db}, PublicURL: cfg.publicURL}
	platforms := providers.PlatformsOf(modules())
	gw, err := providers.NewSet(cfg.builds, providers.Deps{
		Platforms: platforms, Store: db, Intake: intake, Sealer: cfg.sealer, States: states,
		PublicURL: cfg.publicURL, AdminToken: cfg.adminToken, DataDir: cfg.dataDir, MaxBody: cfg.maxBody, Logger: log,
		Holder: holder, ClaimTTL: cfg.runtime.LeaseTTL, Attachments: attach.New(cfg.attachments, db, log.With("component", "attachments")),
	}, func(provider string) func(string) { return failpoint(getenv, provider) })
	if err != nil {
		return err
	}
	// Continue commands read addresses and installations through the
	// providers the intake feeds.
	intake.Links = gw
	sb, sandboxOff, err := sandbox.Open(ctx, cfg.sandbox, sandbox.Deps{Store: db, Vault: &vaults.Resolver{Store: db, Sealer: cfg.sealer, Sessions: db, Logger: log},
		Granters: []sandbox.GitGranter{gw}, Logger: log, Replica: holder, Skills: &skills.Source{Store: db},
		// The usage of ACP agents' model calls, read by the egress proxy,
		// and their platform tools, served by it.
		Meter: cfg.acp.Metered, Local: map[string]http.Handler{acpclient.MCPHost: cfg.acp.MCP()}, Fenced: cfg.acp.Fenced})
	if err != nil {
		return err
	}
	mc := cfg.mcp
	mc.Credentials, mc.Logger = &vaults.Resolver{Store: db, Sealer: cfg.sealer, Sessions: db, Logger: log}, log
	v, _ := buildVersion()
	mc.ClientInfo = mcpbridge.ClientInfo{Name: "switchboard", Version: v}
	mcp := mcpbridge.New(mc)
	if err := mcpbridge.WarnDisallowed(ctx, db, cfg.mcp.StdioAllow, log); err != nil {
		return err
	}
	defer mcp.Shutdown()
	// Background work that follows the store's commit stream ends with
	// this context.
	bg, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	go core.OnArchived(bg, db.Subscribe("mcp", 1024), func(id string) { mcp.Close(id) })
	if sb != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdown)
			defer cancel()
			if err := sb.Close(sctx); err != nil {
				log.Warn("close sandbox backend", "err", err)
			}
		}()
		go core.OnArchived(bg, db.Subscribe("sandbox", 1024), func(id string) {
			// Leftovers are reaped at the next start.
			if err := sb.Remove(bg, id); err != nil {
				log.Warn("remove an archived session's sandbox", "session_id", id, "err", err)
			}
		})
	} else {
		model = models.WithNote(model, sandbox.NoSandboxNote)
	}
	hub := live.NewHub()
	go hub.Run(bg, db.Subscribe("sse", 4096))
	whc := cfg.webhooks
	whc.Store, whc.Commits, whc.Sealer, whc.Logger = db, db, cfg.sealer, log.With("component", "webhooks")
	whc.Holder, whc.ClaimTTL = holder, cfg.runtime.LeaseTTL
	wh := webhooks.New(whc)
	m := metrics.New(db, log)
	go m.Follow(bg, db.Subscribe("metrics", 4096))

	sr := schedules.NewRunner(db, scheduleClock(getenv), log.With("component", "schedules"))
	sr.Openers = gw.ThreadOpeners()
	rc := cfg.runtime
	rc.Store, rc.Commits, rc.Harness, rc.Model, rc.Logger = db, db, &harness.Default{Observer: m, Prices: cfg.prices, TextEvery: cfg.runtime.TextEvery}, model, log
	rc.Failpoint = turnFailpoint(getenv)
	rc.MetricsLabel = platforms.MetricsLabel
	// Files of messages are downloaded by the first turn that reads them,
	// through the provider they came from.
	rc.Attachments, rc.Images = &harness.Attachments{Store: db, Fetcher: gw}, cfg.images.Accept
	if sb != nil {
		// Attached files the model reads with its tools go to its sandbox.
		rc.Attachments.Sandbox = sb
	}
	tc := providers.ToolsetConfig{
		Base:         append(append(harness.Conversation(), sandbox.HandsTools(sb, cfg.sandbox)...), testTools(getenv)...),
		SessionTools: []providers.SessionTools{memoryTools(db, cfg.embedder, log), &schedules.SessionTools{Store: db, Runner: sr, Clock: sr.Clock}},
		MCP:          mcp, Log: db, Logger: log,
	}
	// The model learns its skills before the first turn: mounted in the
	// sandbox, else read through the skill tool.
	tc.Primers = []providers.Primer{&skills.Primer{Store: db, Sandbox: sb != nil}}
	// The web tools that are on: a session with a sandbox fetches from
	// it, through its egress proxy (a nil *Docker is no nil core.Sandbox).
	var webFrom core.Sandbox
	if sb != nil {
		webFrom = sb
	}
	tc.SessionTools = append(tc.SessionTools, webtools.New(cfg.web, webFrom))
	if sb != nil {
		// A session's repository is in its sandbox before its first turn.
		tc.Primers = append(tc.Primers, &checkout.Primer{Sandbox: sb, Repositories: gw, Logger: log})
	} else {
		tc.SessionTools = append(tc.SessionTools, &skills.Tools{Store: db})
	}
	rc.Tools = gw.Toolset(tc)
	// Idle sessions let go of their MCP connections after a while.
	rc.AfterCycle = mcp.Idle
	if sb != nil {
		// Sessions that move between replicas leave their sandboxes.
		rc.Sandboxes = sb
		// Agents whose runtime is acp run in their sessions' sandboxes.
		cfg.acp.Sandbox, cfg.acp.Prices, cfg.acp.Observer, cfg.acp.Logger, cfg.acp.ClientVersion = sb, cfg.prices, m, log, v
		cfg.acp.Leases, cfg.acp.Holder = db, holder
		rc.Runtimes = map[string]harness.Harness{core.RuntimeACP: cfg.acp}
		defer cfg.acp.Close(context.WithoutCancel(ctx))
	}
	rt := runtime.New(rc)
	con, err := console.New(db, console.Config{AdminToken: cfg.adminToken, PublicURL: cfg.publicURL, Logger: log, Heartbeat: cfg.heartbeat, MaxUpload: cfg.skills.MaxBytes,
		Platforms: consolePlatforms(modules(), cfg.settings, cfg.publicURL, gw), Containers: consoleContainers(sb), SandboxOff: consoleSandboxOff(sandboxOff)})
	if err != nil {
		return err
	}
	if err := gw.Start(ctx); err != nil {
		return err
	}
	if err := rt.Start(ctx); err != nil {
		gw.Stop(ctx)
		return err
	}

	srv := httpserver.New(cfg.http, routes(cfg, db, hub, rt, sr, m, wh, gw, clients, states, sb, con, log), log)
	wh.Start(ctx)
	go sr.Run(bg)
	// What a burst of turns leaves on the heap goes back to the system
	// once the gateway is quiet, not minutes later, and with it the pages
	// of the bbolt file its reads mapped.
	trim := memtrim.Config{Logger: log.With("component", "memtrim")}
	if m, ok := db.(interface{ ReleaseMapped() error }); ok {
		trim.After = append(trim.After, func() {
			if err := m.ReleaseMapped(); err != nil {
				log.Warn("release the mapped database", "err", err)
			}
		})
	}
	go memtrim.Run(bg, trim)
	// Caught before the first request is answered: a SIGTERM sent as soon
	// as the gateway answers stops it gracefully.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("switchboard serving", "addr", ln.Addr().String(), "data_dir", cfg.dataDir, "public_url", cfg.publicURL)
	// Printed once the start has succeeded, and recorded as shown only
	// then: a start that failed (a port in use) leaves it to the next.
	if err := showAdminToken(stdout, cfg); err != nil {
		log.Warn("the admin token could not be shown or recorded as shown; the next start prints it again", "err", err)
	}

	select {
	case s := <-sig:
		log.Info("stopping", "signal", s.String())
	case <-stop.Done():
		log.Info("stopping")
	case err := <-serveErr:
		_ = rt.Stop(ctx)
		return fmt.Errorf("http server: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.shutdown)
	defer cancel()
	// Stop taking requests first (event streams end at once), then
	// checkpoint the turns in flight: they stay open in the log and resume
	// at the next start.
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if err := rt.Stop(sctx); err != nil {
		log.Warn("runtime stop", "err", err)
	}
	gw.Stop(sctx)
	// Attempts cut short stay due and are made again at the next start.
	if err := wh.Stop(sctx); err != nil {
		log.Warn("webhooks stop", "err", err)
	}
	log.Info("stopped")
	return nil
}

// memoryTools is the memory tool's provider: search by meaning when an
// embedding model is configured. A nil *embeddings.Client must not reach
// the interface field, where it would not be nil.
func memoryTools(db backend.Store, emb *embeddings.Client, log *slog.Logger) *memory.SessionTools {
	st := &memory.SessionTools{Stores: db, Embeddings: db, Logger: log}
	if emb != nil {
		st.Embedder = emb
		log.Info("memory search ranks by meaning", "embedding_model", emb.Model())
	}
	return st
}
