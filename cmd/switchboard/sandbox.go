package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sandbox/egress"
	"github.com/switchboardhq/switchboard/sandbox/environments"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// sandboxConfig is the validated SWITCHBOARD_SANDBOX_* and
// SWITCHBOARD_EGRESS_* settings.
type sandboxConfig struct {
	mode           string // "docker", "none", or "" (docker when an engine answers)
	image          string
	idle, command  time.Duration
	build          time.Duration
	limits         sandbox.Limits
	deploymentFile string
	dataDir        string

	egress       string // "on", "off", or "" (on when the gateway may set firewall rules)
	egressPort   int
	allowPrivate bool
	roots        *x509.CertPool // nil: the system's
}

func loadSandboxConfig(s settings.Values, dataDir string) (sandboxConfig, error) {
	c := sandboxConfig{mode: s["SWITCHBOARD_SANDBOX"], image: s["SWITCHBOARD_SANDBOX_IMAGE"], deploymentFile: filepath.Join(dataDir, "deployment-id"), dataDir: dataDir}
	switch c.mode {
	case "", "docker", "none":
	default:
		return c, fmt.Errorf("SWITCHBOARD_SANDBOX=%q: want docker or none", c.mode)
	}
	if c.image == "" && c.mode != "none" {
		return c, errors.New(`SWITCHBOARD_SANDBOX_IMAGE="": want an image name`)
	}
	var err error
	if c.idle, err = s.Duration("SWITCHBOARD_SANDBOX_IDLE_SECONDS"); err != nil {
		return c, err
	}
	if c.command, err = s.Duration("SWITCHBOARD_SANDBOX_COMMAND_SECONDS"); err != nil {
		return c, err
	}
	if c.build, err = s.Duration("SWITCHBOARD_SANDBOX_BUILD_SECONDS"); err != nil {
		return c, err
	}
	mem, err := s.Int("SWITCHBOARD_SANDBOX_MEMORY_MB", 16)
	if err != nil {
		return c, err
	}
	pids, err := s.Int("SWITCHBOARD_SANDBOX_PIDS", 16)
	if err != nil {
		return c, err
	}
	cpus, err := s.Float("SWITCHBOARD_SANDBOX_CPUS", 0.01, 1024)
	if err != nil {
		return c, err
	}
	c.limits = sandbox.Limits{MemoryBytes: int64(mem) << 20, Pids: int64(pids), NanoCPUs: int64(cpus * 1e9)}
	return c, loadEgressConfig(s, &c)
}

func loadEgressConfig(s settings.Values, c *sandboxConfig) error {
	switch c.egress = s["SWITCHBOARD_EGRESS"]; c.egress {
	case "", "on", "off":
	default:
		return fmt.Errorf("SWITCHBOARD_EGRESS=%q: want on or off", c.egress)
	}
	if port, err := strconv.Atoi(s["SWITCHBOARD_EGRESS_PORT"]); err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("SWITCHBOARD_EGRESS_PORT=%q: want a port from 1 to 65535", s["SWITCHBOARD_EGRESS_PORT"])
	} else {
		c.egressPort = port
	}
	var err error
	if c.allowPrivate, err = s.Bool("SWITCHBOARD_EGRESS_ALLOW_PRIVATE"); err != nil {
		return err
	}
	if file := s["SWITCHBOARD_EGRESS_CA_FILE"]; file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_EGRESS_CA_FILE: %w", err)
		}
		if c.roots, err = x509.SystemCertPool(); err != nil || c.roots == nil {
			c.roots = x509.NewCertPool()
		}
		if !c.roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("SWITCHBOARD_EGRESS_CA_FILE=%s: no PEM certificate in it", file)
		}
	}
	return nil
}

// noSandboxNote is added to the system prompt when sessions have no
// sandbox, so that the model does not promise work it cannot do.
const noSandboxNote = "Note: this gateway runs without a code sandbox. The bash, read, write, edit, ls, glob and grep tools are not available: you cannot run commands, or read or change files. Say so if a request needs them."

// sandboxStore is what the sandbox wiring reads: sessions and their
// agents (which environment), environments, vault credentials.
type sandboxStore interface {
	core.SessionStore
	core.AgentStore
	core.EnvironmentStore
	core.VaultStore
}

// openSandbox connects the Docker backend as configured (with the egress
// proxy unless it is off) and reaps what a previous process left. It
// returns nil when sessions run without a sandbox: SWITCHBOARD_SANDBOX=none,
// or no engine (or image) in auto mode.
func openSandbox(ctx context.Context, c sandboxConfig, store sandboxStore, grants *platformGrants, log *slog.Logger) (*sandbox.Docker, error) {
	if c.mode == "none" {
		log.Info("sandbox off (SWITCHBOARD_SANDBOX=none): no hands tools")
		return nil, nil
	}
	deployment, err := deploymentID(c.deploymentFile)
	if err != nil {
		return nil, err
	}
	events := egressEvents{store: store, log: log}
	cfg := sandbox.Config{
		Image:          c.image,
		Deployment:     deployment,
		IdleTimeout:    c.idle,
		Limits:         c.limits,
		CommandTimeout: min(2*time.Minute, c.command),
		BuildTimeout:   c.build,
		Environments:   environments.Sessions{Store: store},
		Logger:         log,
	}
	if c.egress != "off" {
		ca, err := egress.LoadOrCreateCA(c.dataDir)
		if err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
		}
		cfg.Egress = &sandbox.EgressConfig{
			Port:         c.egressPort,
			CA:           ca,
			Credentials:  grants,
			Grants:       grants,
			RootCAs:      c.roots,
			AllowPrivate: c.allowPrivate,
			Record:       events.record,
		}
	}
	d, err := sandbox.Connect(ctx, cfg)
	if c.egress == "" && errors.Is(err, sandbox.ErrFirewall) {
		log.Warn("egress proxy off: sandboxes reach nothing and cannot install packages (run as root, or set SWITCHBOARD_EGRESS=off to silence this)", "err", err)
		cfg.Egress = nil
		d, err = sandbox.Connect(ctx, cfg)
	}
	switch {
	case err == nil:
	case c.mode == "" && errors.Is(err, core.ErrSandboxUnavailable):
		log.Warn("sandbox off: no hands tools (set SWITCHBOARD_SANDBOX=docker to make this an error)", "err", err)
		return nil, nil
	case errors.Is(err, sandbox.ErrNoImage):
		return nil, fmt.Errorf("SWITCHBOARD_SANDBOX_IMAGE=%s: %w", c.image, err)
	case errors.Is(err, sandbox.ErrFirewall), errors.Is(err, sandbox.ErrEgress):
		return nil, fmt.Errorf("SWITCHBOARD_EGRESS=%s: %s", c.egress, oneLine(err))
	default:
		return nil, fmt.Errorf("SWITCHBOARD_SANDBOX=docker: %s", oneLine(err))
	}
	res, err := d.Reap(ctx, func(ctx context.Context, id string) (core.Status, error) {
		s, err := store.GetSession(ctx, id)
		if err != nil {
			return "", err
		}
		return s.Status, nil
	})
	if err != nil {
		// Leftovers cost disk, not correctness: the next start tries again.
		log.Warn("reap sandboxes", "removed", res.Removed, "adopted", res.Adopted, "err", err)
	}
	log.Info("sandbox on", "image", c.image, "deployment", deployment, "idle_timeout", c.idle.String(), "egress", cfg.Egress != nil)
	return d, nil
}

// oneLine keeps a start-up error to one line (engine and iptables
// messages can span several).
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// handsTools are the tools over sb; none without a sandbox.
func handsTools(sb *sandbox.Docker, c sandboxConfig) []core.Tool {
	if sb == nil {
		return nil
	}
	return hands.Tools(sb, hands.Options{MaxTimeout: c.command})
}

// egressEvents appends the proxy's decisions to the sessions' logs as
// internal sandbox.egress events (followers and destinations see them
// through the commit stream).
type egressEvents struct {
	store core.SessionStore
	log   *slog.Logger
}

func (e egressEvents) record(ctx context.Context, sessionID string, body core.EgressBody) {
	ev := core.NewEvent(core.TypeSandboxEgress, core.LevelInternal, core.ActorSystem, body)
	if _, err := e.store.Append(ctx, sessionID, core.AppendRequest{Events: []core.Event{ev}}); err != nil && !errors.Is(err, core.ErrArchived) {
		e.log.Warn("log an egress decision", "session_id", sessionID, "host", body.Host, "decision", body.Decision, "err", err)
	}
}

// sandboxRoutes is what /v1/environments needs: the environments, and the
// backend (nil without a sandbox) that checks their images.
type sandboxRoutes struct {
	backend *sandbox.Docker
	envs    core.EnvironmentStore
}

func (r sandboxRoutes) register(mux *http.ServeMux, creds core.VaultStore, maxBody int64, log *slog.Logger) {
	h := &environments.Handler{Store: r.envs, Credentials: creds, Logger: log, MaxBody: maxBody}
	if r.backend != nil {
		h.Images = r.backend
	}
	h.Register(mux)
}

// deploymentID reads the id that names this gateway's Docker objects,
// generating it on first start: it survives restarts, so that a restarted
// gateway finds its sandboxes, and differs between data directories, so
// that gateways sharing an engine leave each other's alone.
func deploymentID(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(raw)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
	}
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b)
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
	}
	return id, nil
}
