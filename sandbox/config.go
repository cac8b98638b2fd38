package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Labels put on every Docker object the backend creates.
const (
	LabelDeployment = "switchboard.deployment"
	LabelSession    = "switchboard.session"
	LabelRole       = "switchboard.role"
)

// Limits bound each sandbox container.
type Limits struct {
	MemoryBytes int64 // memory, without swap
	Pids        int64 // processes and threads
	NanoCPUs    int64 // CPU time, in billionths of a CPU
}

// DefaultLimits apply to the zero fields of Config.Limits.
var DefaultLimits = Limits{MemoryBytes: 2 << 30, Pids: 512, NanoCPUs: 1e9}

// SessionStatus tells the reaper what became of a session: its status, or
// an error wrapping core.ErrNotFound when it is gone.
type SessionStatus func(ctx context.Context, sessionID string) (core.Status, error)

// Config sets up the Docker backend.
type Config struct {
	// Image runs every sandbox; it must exist in the engine (nothing is
	// pulled). It needs sh and the users below; see the README.
	Image string
	// Deployment names this gateway's containers, volumes and network
	// (switchboard-<deployment>-…) and labels them, so that a restart finds
	// them and gateways sharing an engine leave each other's alone.
	Deployment string
	// IdleTimeout stops a container unused this long (default 5 minutes).
	IdleTimeout time.Duration
	Limits      Limits
	// CommandTimeout is the default timeout of a command (default 2
	// minutes); MaxOutput the default bytes kept per stream (default 30000).
	CommandTimeout time.Duration
	MaxOutput      int
	// User runs commands; InitUser runs the container's init, which must
	// differ from User so that killing all of User's processes leaves the
	// container up (defaults 1000:1000 and 65534:65534).
	User, InitUser string
	// Home is the command user's $HOME, a tmpfs (default /home/agent).
	Home string
	// Network is the Docker network sandboxes join. Empty: the deployment's
	// own internal network, created at first use, from which nothing is
	// reachable. The egress proxy's network goes here.
	Network string
	// Env is added to every command's environment: where the egress proxy
	// sets HTTP_PROXY and HTTPS_PROXY. Never put a secret here.
	Env []string
	// Host is the engine's address; empty means DOCKER_HOST or the default
	// socket.
	Host   string
	Logger *slog.Logger
}

var (
	deploymentPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	userPattern       = regexp.MustCompile(`^[0-9]+:[0-9]+$`)
)

// withDefaults validates c and fills its zero fields.
func (c Config) withDefaults() (Config, error) {
	if c.Image == "" {
		return c, fmt.Errorf("sandbox image is required: %w", core.ErrInvalid)
	}
	if !deploymentPattern.MatchString(c.Deployment) {
		return c, fmt.Errorf("sandbox deployment %q: want 1 to 32 of a-z, 0-9 and -: %w", c.Deployment, core.ErrInvalid)
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.Limits.MemoryBytes <= 0 {
		c.Limits.MemoryBytes = DefaultLimits.MemoryBytes
	}
	if c.Limits.Pids <= 0 {
		c.Limits.Pids = DefaultLimits.Pids
	}
	if c.Limits.NanoCPUs <= 0 {
		c.Limits.NanoCPUs = DefaultLimits.NanoCPUs
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = 2 * time.Minute
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = 30_000
	}
	if c.User == "" {
		c.User = "1000:1000"
	}
	if c.InitUser == "" {
		c.InitUser = "65534:65534"
	}
	if !userPattern.MatchString(c.User) || !userPattern.MatchString(c.InitUser) {
		return c, fmt.Errorf("sandbox users %q and %q: want uid:gid in numbers: %w", c.User, c.InitUser, core.ErrInvalid)
	}
	if c.InitUser == c.User {
		return c, fmt.Errorf("sandbox init user must differ from the command user %q: %w", c.User, core.ErrInvalid)
	}
	if c.Home == "" {
		c.Home = "/home/agent"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Names of the Docker objects of a deployment.
func (c Config) networkName() string { return "switchboard-" + c.Deployment }

func (c Config) containerName(sessionID string) string {
	return "switchboard-" + c.Deployment + "-" + sessionID
}

func (c Config) volumeName(sessionID string) string {
	return "switchboard-" + c.Deployment + "-" + sessionID + "-workspace"
}

func (c Config) labels(sessionID, role string) map[string]string {
	l := map[string]string{LabelDeployment: c.Deployment, LabelRole: role}
	if sessionID != "" {
		l[LabelSession] = sessionID
	}
	return l
}
