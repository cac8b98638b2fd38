package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// sandboxConfig is the validated SWITCHBOARD_SANDBOX_* settings.
type sandboxConfig struct {
	mode           string // "docker", "none", or "" (docker when an engine answers)
	image          string
	idle, command  time.Duration
	limits         sandbox.Limits
	deploymentFile string
}

func loadSandboxConfig(s settings, dataDir string) (sandboxConfig, error) {
	c := sandboxConfig{mode: s["SWITCHBOARD_SANDBOX"], image: s["SWITCHBOARD_SANDBOX_IMAGE"], deploymentFile: filepath.Join(dataDir, "deployment-id")}
	switch c.mode {
	case "", "docker", "none":
	default:
		return c, fmt.Errorf("SWITCHBOARD_SANDBOX=%q: want docker or none", c.mode)
	}
	if c.image == "" && c.mode != "none" {
		return c, errors.New(`SWITCHBOARD_SANDBOX_IMAGE="": want an image name`)
	}
	var err error
	if c.idle, err = s.duration("SWITCHBOARD_SANDBOX_IDLE_SECONDS"); err != nil {
		return c, err
	}
	if c.command, err = s.duration("SWITCHBOARD_SANDBOX_COMMAND_SECONDS"); err != nil {
		return c, err
	}
	mem, err := s.int("SWITCHBOARD_SANDBOX_MEMORY_MB", 16)
	if err != nil {
		return c, err
	}
	pids, err := s.int("SWITCHBOARD_SANDBOX_PIDS", 16)
	if err != nil {
		return c, err
	}
	cpus, err := s.float("SWITCHBOARD_SANDBOX_CPUS", 0.01, 1024)
	if err != nil {
		return c, err
	}
	c.limits = sandbox.Limits{MemoryBytes: int64(mem) << 20, Pids: int64(pids), NanoCPUs: int64(cpus * 1e9)}
	return c, nil
}

// noSandboxNote is added to the system prompt when sessions have no
// sandbox, so that the model does not promise work it cannot do.
const noSandboxNote = "Note: this gateway runs without a code sandbox. The bash, read, write, edit, ls, glob and grep tools are not available: you cannot run commands, or read or change files. Say so if a request needs them."

// openSandbox connects the Docker backend as configured and reaps what a
// previous process left. It returns nil when sessions run without a
// sandbox: SWITCHBOARD_SANDBOX=none, or no engine (or image) in auto mode.
func openSandbox(ctx context.Context, c sandboxConfig, store core.SessionStore, log *slog.Logger) (*sandbox.Docker, error) {
	if c.mode == "none" {
		log.Info("sandbox off (SWITCHBOARD_SANDBOX=none): no hands tools")
		return nil, nil
	}
	deployment, err := deploymentID(c.deploymentFile)
	if err != nil {
		return nil, err
	}
	d, err := sandbox.Connect(ctx, sandbox.Config{
		Image:          c.image,
		Deployment:     deployment,
		IdleTimeout:    c.idle,
		Limits:         c.limits,
		CommandTimeout: min(2*time.Minute, c.command),
		Logger:         log,
	})
	switch {
	case err == nil:
	case c.mode == "" && errors.Is(err, core.ErrSandboxUnavailable):
		log.Warn("sandbox off: no hands tools (set SWITCHBOARD_SANDBOX=docker to make this an error)", "err", err)
		return nil, nil
	case errors.Is(err, sandbox.ErrNoImage):
		return nil, fmt.Errorf("SWITCHBOARD_SANDBOX_IMAGE=%s: %w", c.image, err)
	default:
		return nil, fmt.Errorf("SWITCHBOARD_SANDBOX=docker: %w", err)
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
	log.Info("sandbox on", "image", c.image, "deployment", deployment, "idle_timeout", c.idle.String())
	return d, nil
}

// handsTools are the tools over sb; none without a sandbox.
func handsTools(sb *sandbox.Docker, c sandboxConfig) []core.Tool {
	if sb == nil {
		return nil
	}
	return hands.Tools(sb, hands.Options{MaxTimeout: c.command})
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
