package sandbox

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// Labels put on every Docker object the backend creates.
const (
	LabelDeployment = "switchboard.deployment"
	LabelSession    = "switchboard.session"
	LabelRole       = "switchboard.role"
	// LabelSpec is the hash of what a sandbox container was created with
	// (image, environment variables, limits): one whose hash differs from
	// its session's environment now is created again at its next start.
	LabelSpec = "switchboard.spec"
	// LabelIdle is the container's idle timeout in seconds, so that a
	// running container found at start-up keeps its environment's.
	LabelIdle = "switchboard.idle_seconds"
	// LabelRecipe is the hash of a prepared image's recipe.
	LabelRecipe = "switchboard.recipe"
)

// Limits bound each sandbox container.
type Limits struct {
	MemoryBytes int64 // memory, without swap
	Pids        int64 // processes and threads
	NanoCPUs    int64 // CPU time, in billionths of a CPU
}

// DefaultLimits apply to the zero fields of Config.Limits.
var DefaultLimits = Limits{MemoryBytes: 2 << 30, Pids: 512, NanoCPUs: 1e9}

// SessionState is what the reaper learns of a session.
type SessionState struct {
	Status core.Status
	// Elsewhere: another replica ran the session since this one did (it
	// moved while this one was down), so the sandbox here is an orphan.
	Elsewhere bool
}

// SessionStatus tells the reaper what became of a session, or returns an
// error wrapping core.ErrNotFound when it is gone.
type SessionStatus func(ctx context.Context, sessionID string) (SessionState, error)

// Timer is a started idle timer (*time.Timer is one).
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// Config sets up the Docker backend.
type Config struct {
	// Image runs every sandbox; it must exist in the engine (nothing is
	// pulled). It needs sh and the users below; see docs/sandbox.md#images.
	Image string
	// Deployment names this gateway's containers, volumes and network
	// (switchboard-<deployment>-…) and labels them, so that a restart finds
	// them and gateways sharing an engine leave each other's alone.
	Deployment string
	// IdleTimeout stops a container unused this long (default 5 minutes).
	IdleTimeout time.Duration
	// AfterFunc starts an idle timer: f runs after d unless the timer is
	// stopped or reset first (default time.AfterFunc; tests fire timers
	// themselves).
	AfterFunc func(d time.Duration, f func()) Timer
	Limits    Limits
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
	// Network is a Docker network for sandboxes to join instead of the
	// deployment's own (see doc.go); not with Egress, which needs the
	// deployment's own.
	Network string
	// Env is added to every sandbox's environment. Never put a secret here.
	Env []string
	// Environments resolves a session's environment; nil (or a nil
	// environment) means the defaults above, no packages, no network.
	Environments EnvironmentSource
	// Skills finds the skills a session's sandbox mounts read-only at
	// core.SandboxSkills/<name>/; nil mounts none.
	Skills SkillSource
	// Egress, when set, runs the egress proxy: the one address sandboxes
	// reach. Without it they reach nothing and cannot install packages.
	Egress *EgressConfig
	// BuildTimeout bounds building one prepared image (default 15 minutes).
	BuildTimeout time.Duration
	// WorkspaceDriver, when set, is the Docker volume driver of the
	// workspaces: a plugin every replica's engine has, that keeps volumes
	// on storage they all reach. A workspace is then named after its
	// session alone, so a session that moves to another replica mounts
	// the same files there (docs/sandbox-backends.md#shared-workspaces).
	// Empty: the engine's local volumes, which a move leaves behind.
	WorkspaceDriver string
	// Host is the engine's address; empty means DOCKER_HOST or the default
	// socket.
	Host   string
	Logger *slog.Logger
}

var (
	deploymentPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	userPattern       = regexp.MustCompile(`^[0-9]+:[0-9]+$`)
)

// EnvironmentSource finds the environment a session's sandbox is made of.
type EnvironmentSource interface {
	// SessionEnvironment returns the session's environment, or nil for
	// the default one; an environment the session names that does not
	// exist is an error.
	SessionEnvironment(ctx context.Context, sessionID string) (*core.Environment, error)
}

// GrantSource tells what a session may reach because of where it came
// from, not what its environment allows: a GitHub session's repository on
// the GitHub host, with a credential id Credentials resolves.
type GrantSource interface {
	// SessionGrant returns the hosts and credential ids added for the
	// session; a zero Policy when it has none.
	SessionGrant(ctx context.Context, sessionID string) (egress.Policy, error)
}

// EgressConfig sets up the egress proxy.
type EgressConfig struct {
	// Port is where the proxy listens, on the deployment network's gateway
	// address only (default 3128). Sandboxes keep it in their environment,
	// so changing it recreates them (workspaces kept).
	Port int
	// MaxConns is how many connections one sandbox may hold open through
	// the proxy; more are refused at accept (default
	// egress.DefaultMaxConnsPerClient).
	MaxConns int
	// CA signs the certificates of hosts whose TLS the proxy terminates;
	// its certificate is baked into every prepared image.
	CA *egress.CA
	// Credentials resolves the vault credentials environments list, and
	// those Grants name.
	Credentials core.CredentialSource
	// Grants adds to a session's egress what its origin needs beyond its
	// environment (a platform's git host, with the installation's token);
	// nil adds nothing.
	Grants GrantSource
	// Local are hosts the proxy answers itself (egress.Config.Local);
	// Fenced refuses sessions that moved away (egress.Config.Fenced).
	Local  map[string]http.Handler
	Fenced func(ctx context.Context, sessionID string) string
	// Meter is told the model usage the proxy reads on the metered hosts
	// of a session's grant (an ACP agent's model vendor); nil reads none.
	Meter func(sessionID, model string, u core.Usage)
	// RootCAs verify upstreams (nil: the system's roots).
	RootCAs *x509.CertPool
	// AllowPrivate lets upstreams be loopback, private or link-local.
	AllowPrivate bool
	// PrivateHosts may be reached at private addresses, by name.
	PrivateHosts []string
	// Record receives each egress decision made for a session.
	Record func(ctx context.Context, sessionID string, body core.EgressBody)
	// PackageHosts are reachable while an image is built, by package
	// manager, beside the environment's allowlist (default
	// DefaultPackageHosts).
	PackageHosts map[string][]string
	// NPMRegistry, when set, is the npm registry builds install from (a
	// mirror, a private registry) instead of registry.npmjs.org.
	NPMRegistry string
	// PipIndex, GoProxy, CargoIndex and GemSource are the same for pip (a
	// PEP 503 simple index, instead of pypi.org), go (a GOPROXY, instead
	// of proxy.golang.org; the checksum database is then not asked),
	// cargo (a sparse registry's index, instead of crates.io) and gem (a
	// gem source, instead of rubygems.org). The build reaches the
	// registry's host instead of the manager's public ones.
	PipIndex, GoProxy, CargoIndex, GemSource string
}

// DefaultPackageHosts are the registries each package manager reaches
// while a prepared image is built. An image whose apt sources name another
// mirror needs it on its environment's allowlist.
var DefaultPackageHosts = map[string][]string{
	"apt":   {"deb.debian.org", "security.debian.org"},
	"pip":   {"pypi.org", "files.pythonhosted.org"},
	"npm":   {"registry.npmjs.org"},
	"go":    {"proxy.golang.org", "sum.golang.org"},
	"cargo": {"crates.io", "index.crates.io", "static.crates.io"},
	"gem":   {"rubygems.org", "index.rubygems.org"},
}

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
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
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
	if c.BuildTimeout <= 0 {
		c.BuildTimeout = 15 * time.Minute
	}
	if c.Egress != nil {
		e := *c.Egress
		switch {
		case c.Network != "":
			return c, fmt.Errorf("the egress proxy needs the deployment's own network, not %q: %w", c.Network, core.ErrInvalid)
		case e.CA == nil:
			return c, fmt.Errorf("the egress proxy needs a CA: %w", core.ErrInvalid)
		case e.Port < 0 || e.Port > 65535:
			return c, fmt.Errorf("egress port %d: want 1 to 65535: %w", e.Port, core.ErrInvalid)
		}
		if e.Port == 0 {
			e.Port = 3128
		}
		if e.PackageHosts == nil {
			e.PackageHosts = DefaultPackageHosts
		}
		c.Egress = &e
	}
	return c, nil
}

// Names of the Docker objects of a deployment.
func (c Config) networkName() string { return "switchboard-" + c.Deployment }

func (c Config) containerName(sessionID string) string {
	return "switchboard-" + c.Deployment + "-" + sessionID
}

func (c Config) volumeName(sessionID string) string {
	if c.WorkspaceDriver != "" {
		// Every replica's engine names the shared workspace alike: the
		// deployment id differs between replicas, session ids do not.
		return "switchboard-" + sessionID + "-workspace"
	}
	return "switchboard-" + c.Deployment + "-" + sessionID + "-workspace"
}

// buildName names the container that prepares the image of recipe hash h;
// the double dash keeps it apart from every session's container.
func (c Config) buildName(h string) string { return "switchboard-" + c.Deployment + "--build-" + h }

func (c Config) labels(sessionID, role string) map[string]string {
	l := map[string]string{LabelDeployment: c.Deployment, LabelRole: role}
	if sessionID != "" {
		l[LabelSession] = sessionID
	}
	return l
}
