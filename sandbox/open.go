package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
	"github.com/switchboardhq/switchboard/sandbox/environments"
)

// Store is what Open reads and writes: sessions and what their sandboxes
// are made of, and the logs the egress decisions are appended to.
type Store interface {
	environments.SessionStore
	appender
	// LastHolder names the replica that ran a session last (see
	// core.LeaseStore): the reaper removes what this one keeps of a
	// session that moved away.
	LastHolder(ctx context.Context, sessionID string) (string, error)
	// GetCredential finds the vault credential an ACP agent's model key
	// is, for the hosts it is bound to.
	GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error)
}

// appender appends to a session's log.
type appender interface {
	Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error)
}

// Deps is what Open needs beside the settings.
type Deps struct {
	Store Store
	// Vault resolves the vault credentials environments name.
	Vault core.CredentialSource
	// Granters grant a platform session's sandbox its repository (GitHub's
	// provider); their credentials resolve at them, not in the vault.
	Granters []GitGranter
	// Skills finds the skill versions a session's agent pins, mounted
	// read-only in its sandbox at /skills/<name>/; nil mounts none.
	Skills SkillSource
	Logger *slog.Logger
	// Replica is this replica's id, the holder of its leases.
	Replica string
	// Meter is told the model usage of what ACP agents' sandboxes call
	// through the egress proxy with their model key injected.
	Meter func(sessionID, model string, u core.Usage)
	// Local are the hosts the egress proxy answers itself for sandboxes
	// (the ACP agents' platform tools), by host name; Fenced says why a
	// session's sandbox may no longer reach them, nor its model vendor.
	Local  map[string]http.Handler
	Fenced func(ctx context.Context, sessionID string) string
}

// Off says why sessions run without a sandbox, as Open found it: the
// cause, and the one change that gives them one.
type Off struct{ Cause, Fix string }

// offOf is why a start whose mode was left open runs without a sandbox,
// err being what Connect said.
func offOf(s Settings, err error) *Off {
	restart := ", then restart the gateway"
	switch {
	case errors.Is(err, ErrNoImage) && s.image != DefaultImage:
		// scripts/sandbox-image builds the default image only.
		return &Off{Cause: "the Docker engine answers but has no image " + s.image + " (SWITCHBOARD_SANDBOX_IMAGE; nothing is pulled)",
			Fix: "load or build " + s.image + " into the engine (docker load, docker import), or unset SWITCHBOARD_SANDBOX_IMAGE and build the default with scripts/sandbox-image --full" + restart}
	case errors.Is(err, ErrNoImage):
		return &Off{Cause: "the Docker engine answers but has no image " + s.image + " (nothing is pulled)",
			Fix: "build it with scripts/sandbox-image --full (or set SWITCHBOARD_SANDBOX_IMAGE to an image the engine has)" + restart}
	case errors.Is(err, ErrNoEngine):
		return &Off{Cause: strings.TrimSuffix(oneLine(err), ": "+core.ErrSandboxUnavailable.Error()),
			Fix: "start the Docker engine (or set DOCKER_HOST to one that runs)" + restart}
	}
	return &Off{Cause: oneLine(err), Fix: "set SWITCHBOARD_SANDBOX to docker and restart the gateway: it then stops at this error and names the setting to change"}
}

// Open connects the Docker backend as s says (with the egress proxy
// unless it is off) and reaps what a previous process left. It returns
// no backend, and why (off), when sessions run without a sandbox:
// SWITCHBOARD_SANDBOX=none, or no engine (or image) when the mode was
// left to Open. An error is one line that names the variable to change.
func Open(ctx context.Context, s Settings, deps Deps) (d *Docker, off *Off, err error) {
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.mode == "none" {
		log.Info("sandbox off (SWITCHBOARD_SANDBOX=none): no hands tools")
		return nil, &Off{Cause: "SWITCHBOARD_SANDBOX is none", Fix: "set SWITCHBOARD_SANDBOX to docker (or remove it), then restart the gateway"}, nil
	}
	deployment, err := deploymentID(filepath.Join(s.dataDir, "deployment-id"))
	if err != nil {
		return nil, nil, err
	}
	events := egressEvents{store: deps.Store, log: log}
	grants := &grantSource{sessions: deps.Store, granters: deps.Granters, vault: deps.Vault, models: deps.Meter != nil, log: log}
	cfg := Config{
		Image:           s.image,
		Deployment:      deployment,
		IdleTimeout:     s.idle,
		Limits:          s.limits,
		CommandTimeout:  min(2*time.Minute, s.command),
		BuildTimeout:    s.build,
		Environments:    environments.Sessions{Store: deps.Store},
		Skills:          deps.Skills,
		WorkspaceDriver: s.driver,
		Logger:          log,
	}
	if s.egress != "off" {
		ca, err := egress.LoadOrCreateCA(s.dataDir)
		if err != nil {
			return nil, nil, fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
		}
		cfg.Egress = &EgressConfig{
			Port:         s.egressPort,
			MaxConns:     s.egressConns,
			CA:           ca,
			Credentials:  grants,
			Grants:       grants,
			RootCAs:      s.roots,
			AllowPrivate: s.allowPrivate,
			PrivateHosts: s.privateHosts,
			NPMRegistry:  s.npmRegistry,
			PipIndex:     s.pipIndex,
			GoProxy:      s.goProxy,
			CargoIndex:   s.cargoIndex,
			GemSource:    s.gemSource,
			Record:       events.record,
			Meter:        deps.Meter,
			Local:        deps.Local,
			Fenced:       deps.Fenced,
		}
	}
	d, err = Connect(ctx, cfg)
	if s.egress == "" && errors.Is(err, ErrFirewall) {
		log.Warn("egress proxy off: sandboxes reach nothing and cannot install packages (run as root, or set SWITCHBOARD_EGRESS=off to silence this)", "err", err)
		cfg.Egress = nil
		d, err = Connect(ctx, cfg)
	}
	switch {
	case err == nil:
	case s.mode == "" && errors.Is(err, core.ErrSandboxUnavailable):
		off := offOf(s, err)
		log.Warn("sandbox off: no hands tools", "cause", off.Cause, "fix", off.Fix)
		return nil, off, nil
	case errors.Is(err, ErrNoImage):
		return nil, nil, fmt.Errorf("SWITCHBOARD_SANDBOX_IMAGE=%s: %w", s.image, err)
	case errors.Is(err, ErrFirewall), errors.Is(err, ErrEgress):
		return nil, nil, fmt.Errorf("SWITCHBOARD_EGRESS=%s: %s", s.egress, oneLine(err))
	default:
		return nil, nil, fmt.Errorf("SWITCHBOARD_SANDBOX=docker: %s", oneLine(err))
	}
	res, err := d.Reap(ctx, func(ctx context.Context, id string) (SessionState, error) {
		sess, err := deps.Store.GetSession(ctx, id)
		if err != nil {
			return SessionState{}, err
		}
		last, err := deps.Store.LastHolder(ctx, id)
		if err != nil {
			return SessionState{}, err
		}
		return SessionState{Status: sess.Status, Elsewhere: deps.Replica != "" && last != "" && last != deps.Replica}, nil
	})
	if err != nil {
		// Leftovers cost disk, not correctness: the next start tries again.
		log.Warn("reap sandboxes", "removed", res.Removed, "adopted", res.Adopted, "err", err)
	}
	log.Info("sandbox on", "image", s.image, "deployment", deployment, "idle_timeout", s.idle.String(), "egress", cfg.Egress != nil, "shared_workspaces", d.SharedWorkspaces())
	return d, nil, nil
}

// oneLine keeps a start-up error to one line (engine and iptables
// messages can span several).
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// egressEvents appends the proxy's decisions to the sessions' logs as
// internal sandbox.egress events (followers and destinations see them
// through the commit stream).
type egressEvents struct {
	store appender
	log   *slog.Logger
}

func (e egressEvents) record(ctx context.Context, sessionID string, body core.EgressBody) {
	ev := core.NewEvent(core.TypeSandboxEgress, core.LevelInternal, core.ActorSystem, body)
	if _, err := e.store.Append(ctx, sessionID, core.AppendRequest{Events: []core.Event{ev}}); err != nil && !errors.Is(err, core.ErrArchived) {
		e.log.Warn("log an egress decision", "session_id", sessionID, "host", body.Host, "decision", body.Decision, "err", err)
	}
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
