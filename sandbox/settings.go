package sandbox

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// Options are the settings of the sandboxes and of the egress proxy; a
// command that runs sessions includes them in its list.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_SANDBOX", Flag: "sandbox", Usage: "docker or none (default: docker when a Docker engine answers and has the image)"},
		{Env: "SWITCHBOARD_SANDBOX_IMAGE", Flag: "sandbox-image", Default: DefaultImage, Usage: "image of the sandboxes (build it with scripts/sandbox-image --full)"},
		{Env: "SWITCHBOARD_SANDBOX_IDLE_SECONDS", Flag: "sandbox-idle-seconds", Default: "300", Usage: "stop a session's sandbox after this long unused (it starts again at the next command)"},
		{Env: "SWITCHBOARD_SANDBOX_MEMORY_MB", Flag: "sandbox-memory-mb", Default: "2048", Usage: "memory limit of each sandbox, in MiB"},
		{Env: "SWITCHBOARD_SANDBOX_PIDS", Flag: "sandbox-pids", Default: "512", Usage: "process limit of each sandbox"},
		{Env: "SWITCHBOARD_SANDBOX_CPUS", Flag: "sandbox-cpus", Default: "1", Usage: "CPU limit of each sandbox, in CPUs"},
		{Env: "SWITCHBOARD_SANDBOX_COMMAND_SECONDS", Flag: "sandbox-command-seconds", Default: "600", Usage: "longest a bash command may run; the model may ask for less (default 120)"},
		{Env: "SWITCHBOARD_SANDBOX_WORKSPACE_DRIVER", Flag: "sandbox-workspace-driver", Usage: "Docker volume driver of the sandboxes' workspaces, one that keeps them on storage every replica reaches, so a session that moves keeps its files (default: the engine's local volumes)"},
		{Env: "SWITCHBOARD_SANDBOX_BUILD_SECONDS", Flag: "sandbox-build-seconds", Default: "900", Usage: "longest building an environment's prepared image may take"},
		{Env: "SWITCHBOARD_EGRESS", Flag: "egress", Usage: "on or off: the egress proxy, sandboxes' only way out (default: on when the gateway may set firewall rules, i.e. runs as root)"},
		{Env: "SWITCHBOARD_EGRESS_PORT", Flag: "egress-port", Default: "3128", Usage: "port of the egress proxy, on the sandbox network's gateway address only"},
		{Env: "SWITCHBOARD_EGRESS_ALLOW_PRIVATE", Flag: "egress-allow-private", Default: "false", Usage: "let the egress proxy reach loopback, private and link-local upstreams"},
		{Env: "SWITCHBOARD_EGRESS_PRIVATE_HOSTS", Flag: "egress-private-hosts", Usage: "host names the egress proxy may reach at private addresses (comma-separated): a self-managed service on your network, without opening every private address"},
		{Env: "SWITCHBOARD_EGRESS_MAX_CONNECTIONS", Flag: "egress-max-connections", Default: strconv.Itoa(egress.DefaultMaxConnsPerClient), Usage: "connections one sandbox may hold open through the egress proxy; more are refused"},
		{Env: "SWITCHBOARD_SANDBOX_NPM_REGISTRY", Flag: "sandbox-npm-registry", Usage: "npm registry environments' npm packages are installed from (a mirror or a private registry; default registry.npmjs.org)"},
		{Env: "SWITCHBOARD_SANDBOX_PIP_INDEX", Flag: "sandbox-pip-index", Usage: "PEP 503 simple index environments' pip packages are installed from (default pypi.org)"},
		{Env: "SWITCHBOARD_SANDBOX_GOPROXY", Flag: "sandbox-goproxy", Usage: "Go module proxy environments' go packages are installed from, trusted without the checksum database (default proxy.golang.org)"},
		{Env: "SWITCHBOARD_SANDBOX_CARGO_INDEX", Flag: "sandbox-cargo-index", Usage: "URL of the sparse registry index environments' cargo packages are installed from (default crates.io)"},
		{Env: "SWITCHBOARD_SANDBOX_GEM_SOURCE", Flag: "sandbox-gem-source", Usage: "gem source environments' gem packages are installed from (default rubygems.org)"},
		{Env: "SWITCHBOARD_EGRESS_CA_FILE", Flag: "egress-ca-file", Usage: "PEM file of extra root CAs the egress proxy trusts upstream (beside the system's)"},
	}
}

// Settings are the validated values of Options: what Open runs with.
type Settings struct {
	mode    string // "docker", "none", or "" (docker when an engine answers)
	image   string
	idle    time.Duration
	command time.Duration // the longest a command may ask for
	build   time.Duration
	limits  Limits
	dataDir string // keeps the deployment id and the egress CA
	driver  string // the workspaces' volume driver; "" local

	egress       string // "on", "off", or "" (on when the gateway may set firewall rules)
	egressPort   int
	egressConns  int
	allowPrivate bool
	privateHosts []string
	roots        *x509.CertPool // nil: the system's
	npmRegistry  string         // "": registry.npmjs.org
	// The other managers' registries, "" for the public one.
	pipIndex, goProxy, cargoIndex, gemSource string
}

// LoadSettings checks the values of Options. A wrong one fails with one
// line that names its variable. dataDir is the gateway's data directory.
func LoadSettings(v settings.Values, dataDir string) (Settings, error) {
	s := Settings{mode: v["SWITCHBOARD_SANDBOX"], image: v["SWITCHBOARD_SANDBOX_IMAGE"], dataDir: dataDir, driver: v["SWITCHBOARD_SANDBOX_WORKSPACE_DRIVER"]}
	switch s.mode {
	case "", "docker", "none":
	default:
		return s, fmt.Errorf("SWITCHBOARD_SANDBOX=%q: want docker or none", s.mode)
	}
	if s.image == "" && s.mode != "none" {
		return s, errors.New(`SWITCHBOARD_SANDBOX_IMAGE="": want an image name`)
	}
	var err error
	if s.idle, err = v.Duration("SWITCHBOARD_SANDBOX_IDLE_SECONDS"); err != nil {
		return s, err
	}
	if s.command, err = v.Duration("SWITCHBOARD_SANDBOX_COMMAND_SECONDS"); err != nil {
		return s, err
	}
	if s.build, err = v.Duration("SWITCHBOARD_SANDBOX_BUILD_SECONDS"); err != nil {
		return s, err
	}
	mem, err := v.Int("SWITCHBOARD_SANDBOX_MEMORY_MB", 16)
	if err != nil {
		return s, err
	}
	pids, err := v.Int("SWITCHBOARD_SANDBOX_PIDS", 16)
	if err != nil {
		return s, err
	}
	cpus, err := v.Float("SWITCHBOARD_SANDBOX_CPUS", 0.01, 1024)
	if err != nil {
		return s, err
	}
	s.limits = Limits{MemoryBytes: int64(mem) << 20, Pids: int64(pids), NanoCPUs: int64(cpus * 1e9)}
	return s, s.loadEgress(v)
}

// DefaultImage is the sandboxes' image unless SWITCHBOARD_SANDBOX_IMAGE
// names another: the one scripts/sandbox-image --full builds.
const DefaultImage = "switchboard-sandbox:latest"

// loadEgress checks the SWITCHBOARD_EGRESS* values.
func (s *Settings) loadEgress(v settings.Values) error {
	switch s.egress = v["SWITCHBOARD_EGRESS"]; s.egress {
	case "", "on", "off":
	default:
		return fmt.Errorf("SWITCHBOARD_EGRESS=%q: want on or off", s.egress)
	}
	port, err := strconv.Atoi(v["SWITCHBOARD_EGRESS_PORT"])
	if err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("SWITCHBOARD_EGRESS_PORT=%q: want a port from 1 to 65535", v["SWITCHBOARD_EGRESS_PORT"])
	}
	s.egressPort = port
	if s.egressConns, err = v.Int("SWITCHBOARD_EGRESS_MAX_CONNECTIONS", 1); err != nil {
		return err
	}
	if s.allowPrivate, err = v.Bool("SWITCHBOARD_EGRESS_ALLOW_PRIVATE"); err != nil {
		return err
	}
	s.privateHosts = v.List("SWITCHBOARD_EGRESS_PRIVATE_HOSTS")
	if v["SWITCHBOARD_SANDBOX_NPM_REGISTRY"] != "" {
		if s.npmRegistry, err = v.URL("SWITCHBOARD_SANDBOX_NPM_REGISTRY"); err != nil {
			return err
		}
	}
	for name, dst := range map[string]*string{
		"SWITCHBOARD_SANDBOX_PIP_INDEX":   &s.pipIndex,
		"SWITCHBOARD_SANDBOX_GOPROXY":     &s.goProxy,
		"SWITCHBOARD_SANDBOX_CARGO_INDEX": &s.cargoIndex,
		"SWITCHBOARD_SANDBOX_GEM_SOURCE":  &s.gemSource,
	} {
		if v[name] != "" {
			if *dst, err = v.URL(name); err != nil {
				return err
			}
		}
	}
	if file := v["SWITCHBOARD_EGRESS_CA_FILE"]; file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_EGRESS_CA_FILE: %w", err)
		}
		// Extra roots add to the system's; a host without them still
		// gets a pool.
		if s.roots, err = x509.SystemCertPool(); err != nil || s.roots == nil {
			s.roots = x509.NewCertPool()
		}
		if !s.roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("SWITCHBOARD_EGRESS_CA_FILE=%s: no PEM certificate in it", file)
		}
	}
	return nil
}
