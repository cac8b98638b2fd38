package core

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Environment is what a session's sandbox is made of: its image, the
// packages installed into it at first start, its (non-secret) environment
// variables, where it may reach through the egress proxy and with which
// vault credentials, its resources and idle timeout. Agents and sessions
// name one by id or name; a session's own wins over its agent's.
type Environment struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Image runs the sandbox; empty means the gateway's default image.
	Image    string            `json:"image,omitempty"`
	Packages Packages          `json:"packages"`
	Env      map[string]string `json:"env,omitempty"`
	Network  NetworkPolicy     `json:"network"`
	// Credentials are vault credential ids the egress proxy injects into
	// HTTPS requests to the hosts each credential is bound to.
	Credentials        []string          `json:"credentials,omitempty"`
	Resources          Resources         `json:"resources"`
	IdleTimeoutSeconds int               `json:"idle_timeout_seconds,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	CreatedAt          Time              `json:"created_at"`
	UpdatedAt          Time              `json:"updated_at"`
}

// Packages are installed into the environment's prepared image, by
// manager, in this order: apt first, so that it can bring the others.
type Packages struct {
	Apt   []string `json:"apt,omitempty"`
	Pip   []string `json:"pip,omitempty"`
	Npm   []string `json:"npm,omitempty"`
	Go    []string `json:"go,omitempty"` // module@version, go install'ed
	Cargo []string `json:"cargo,omitempty"`
	Gem   []string `json:"gem,omitempty"`
}

// Managers lists the package lists by manager name, in install order.
func (p Packages) Managers() []PackageList {
	return []PackageList{{"apt", p.Apt}, {"pip", p.Pip}, {"npm", p.Npm}, {"go", p.Go}, {"cargo", p.Cargo}, {"gem", p.Gem}}
}

// Empty reports whether nothing is to be installed.
func (p Packages) Empty() bool {
	for _, m := range p.Managers() {
		if len(m.Packages) > 0 {
			return false
		}
	}
	return true
}

// PackageList is one manager's packages.
type PackageList struct {
	Manager  string
	Packages []string
}

// Network modes.
const (
	NetworkNone      = "none"
	NetworkAllowlist = "allowlist"
)

// NetworkPolicy says where the sandbox may go through the egress proxy:
// nowhere (none, the default), or the hosts of the allowlist.
type NetworkPolicy struct {
	Mode string `json:"mode"`
	// AllowedHosts are host, host:port or *.domain[:port]; no port means
	// every port.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
}

// Resources bound the sandbox; zero fields take the gateway's defaults.
type Resources struct {
	CPUs     float64 `json:"cpus,omitempty"`
	MemoryMB int     `json:"memory_mb,omitempty"`
	Pids     int     `json:"pids,omitempty"`
	// DiskMB bounds the sandbox's tmpfs mounts (/tmp and $HOME); see
	// docs/sandbox.md#environments for the workspace volume.
	DiskMB int `json:"disk_mb,omitempty"`
}

// PrefixEnvironment is the id prefix of environments.
const PrefixEnvironment = "env"

// TypeSandboxEgress is the internal event logged for each decision of the
// egress proxy (docs/api.md#events).
const TypeSandboxEgress = "sandbox.egress"

// Egress decisions.
const (
	EgressAllowed  = "allowed"  // tunnelled or forwarded as is
	EgressDenied   = "denied"   // refused: not on the allowlist, or a refused address
	EgressInjected = "injected" // TLS terminated and a vault credential injected
)

// EgressBody is the body of a sandbox.egress event. It never holds a
// credential's value, a path or a query: only where, how and why.
type EgressBody struct {
	Host         string `json:"host"`
	Port         int    `json:"port"`
	Method       string `json:"method"`
	Decision     string `json:"decision"`
	Reason       string `json:"reason,omitempty"`
	CredentialID string `json:"credential_id,omitempty"`
	// Repeats counts identical decisions folded into this one since the
	// last event of the same key (a loop probing one host logs a trickle).
	Repeats int `json:"repeats,omitempty"`
}

// EnvironmentStore keeps environments.
type EnvironmentStore interface {
	// CreateEnvironment validates and saves a new environment; it assigns
	// id and timestamps. Names are unique (ErrConflict).
	CreateEnvironment(ctx context.Context, e *Environment) (*Environment, error)
	// GetEnvironment finds an environment by id or name.
	GetEnvironment(ctx context.Context, idOrName string) (*Environment, error)
	ListEnvironments(ctx context.Context, after string, limit int) ([]*Environment, bool, error)
	// UpdateEnvironment applies update to the stored environment and saves
	// it, validated; identity and created_at are kept.
	UpdateEnvironment(ctx context.Context, idOrName string, update func(*Environment) error) (*Environment, error)
	DeleteEnvironment(ctx context.Context, idOrName string) error
}

// SandboxEnvVars are set by the sandbox itself (the proxy, the CA bundle,
// $HOME); an environment may not set them, in any case.
var SandboxEnvVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS",
	"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "HOME",
}

// Bounds of an environment, so its record and its build stay small.
const (
	maxPackages     = 100
	maxEnvVars      = 64
	maxEnvValue     = 4096
	maxHosts        = 100
	maxCredentials  = 20
	maxIdleSeconds  = 7 * 24 * 3600
	maxEnvNameBytes = 200
)

var (
	// A package spec is a name with an optional version or extras; never
	// an option, a space or a shell metacharacter (the build passes them
	// as separate words anyway).
	packagePattern = regexp.MustCompile(`^[A-Za-z0-9@][A-Za-z0-9@._+:/=<>!~^*,\[\]-]{0,199}$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// validRecordName is the rule for the names of records that agents and
// sessions name by id or name (environments, memory stores): not blank,
// at most maxEnvNameBytes of UTF-8, and never like an id of the kind, so
// the two never collide.
func validRecordName(kind, name, prefix string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%s name is required: %w", kind, ErrInvalid)
	case len(name) > maxEnvNameBytes || !utf8.ValidString(name):
		return fmt.Errorf("%s name: want valid UTF-8 of at most %d bytes: %w", kind, maxEnvNameBytes, ErrInvalid)
	case HasPrefix(name, prefix):
		return fmt.Errorf("%s name %q looks like an id: %w", kind, name, ErrInvalid)
	}
	return nil
}

// Validate checks what a store must refuse to save, and fills the network
// mode's default.
func (e *Environment) Validate() error {
	if err := validRecordName("environment", e.Name, PrefixEnvironment); err != nil {
		return err
	}
	switch {
	case strings.ContainsAny(e.Image, " \t\r\n"):
		return fmt.Errorf("image %q: want an image reference: %w", e.Image, ErrInvalid)
	}
	for _, m := range e.Packages.Managers() {
		if len(m.Packages) > maxPackages {
			return fmt.Errorf("packages.%s has %d packages; at most %d: %w", m.Manager, len(m.Packages), maxPackages, ErrInvalid)
		}
		for i, p := range m.Packages {
			if !packagePattern.MatchString(p) {
				return fmt.Errorf("packages.%s[%d] %q: want a package name, optionally with a version: %w", m.Manager, i, p, ErrInvalid)
			}
			if m.Manager == "go" && !strings.Contains(p, "@") {
				return fmt.Errorf("packages.go[%d] %q: want module/path@version (go install needs the version): %w", i, p, ErrInvalid)
			}
		}
	}
	if err := e.validateEnv(); err != nil {
		return err
	}
	if err := e.validateNetwork(); err != nil {
		return err
	}
	r := e.Resources
	switch {
	case r.CPUs < 0 || (r.CPUs > 0 && r.CPUs < 0.01) || r.CPUs > 1024:
		return fmt.Errorf("resources.cpus %g: want 0.01 to 1024 (0: the default): %w", r.CPUs, ErrInvalid)
	case r.MemoryMB < 0 || (r.MemoryMB > 0 && r.MemoryMB < 16):
		return fmt.Errorf("resources.memory_mb %d: want at least 16 (0: the default): %w", r.MemoryMB, ErrInvalid)
	case r.Pids < 0 || (r.Pids > 0 && r.Pids < 16):
		return fmt.Errorf("resources.pids %d: want at least 16 (0: the default): %w", r.Pids, ErrInvalid)
	case r.DiskMB < 0 || (r.DiskMB > 0 && r.DiskMB < 16):
		return fmt.Errorf("resources.disk_mb %d: want at least 16 (0: the default): %w", r.DiskMB, ErrInvalid)
	case e.IdleTimeoutSeconds < 0 || e.IdleTimeoutSeconds > maxIdleSeconds:
		return fmt.Errorf("idle_timeout_seconds %d: want 1 to %d (0: the default): %w", e.IdleTimeoutSeconds, maxIdleSeconds, ErrInvalid)
	}
	return nil
}

func (e *Environment) validateEnv() error {
	if len(e.Env) > maxEnvVars {
		return fmt.Errorf("env has %d variables; at most %d: %w", len(e.Env), maxEnvVars, ErrInvalid)
	}
	for k, v := range e.Env {
		if !envNamePattern.MatchString(k) {
			return fmt.Errorf("env %q: want a variable name of letters, digits and _: %w", k, ErrInvalid)
		}
		for _, reserved := range SandboxEnvVars {
			if strings.EqualFold(k, reserved) {
				return fmt.Errorf("env %q is set by the sandbox itself: %w", k, ErrInvalid)
			}
		}
		if len(v) > maxEnvValue || strings.ContainsRune(v, 0) {
			return fmt.Errorf("env %q: want a value of at most %d bytes without NUL: %w", k, maxEnvValue, ErrInvalid)
		}
	}
	return nil
}

func (e *Environment) validateNetwork() error {
	n := &e.Network
	if n.Mode == "" {
		n.Mode = NetworkNone
	}
	switch n.Mode {
	case NetworkNone:
		if len(n.AllowedHosts) > 0 {
			return fmt.Errorf("network.allowed_hosts needs network.mode allowlist: %w", ErrInvalid)
		}
		if len(e.Credentials) > 0 {
			return fmt.Errorf("credentials need network.mode allowlist (and their hosts on it): %w", ErrInvalid)
		}
	case NetworkAllowlist:
		if len(n.AllowedHosts) == 0 || len(n.AllowedHosts) > maxHosts {
			return fmt.Errorf("network.allowed_hosts: want 1 to %d hosts with mode allowlist: %w", maxHosts, ErrInvalid)
		}
		for i, h := range n.AllowedHosts {
			if _, err := ParseHostPattern(h, true); err != nil {
				return fmt.Errorf("network.allowed_hosts[%d] %q %v: %w", i, h, err, ErrInvalid)
			}
		}
	default:
		return fmt.Errorf("network.mode %q: want none or allowlist: %w", n.Mode, ErrInvalid)
	}
	if len(e.Credentials) > maxCredentials {
		return fmt.Errorf("credentials: at most %d: %w", maxCredentials, ErrInvalid)
	}
	seen := map[string]bool{}
	for i, c := range e.Credentials {
		if !HasPrefix(c, PrefixCredential) {
			return fmt.Errorf("credentials[%d] %q: want a vault credential id (vcr_…): %w", i, c, ErrInvalid)
		}
		if seen[c] {
			return fmt.Errorf("credentials[%d] %q is listed twice: %w", i, c, ErrInvalid)
		}
		seen[c] = true
	}
	return nil
}

// HostPattern is a host the egress proxy may reach: a name or an address,
// or every name under a domain, on one port or on all of them.
type HostPattern struct {
	Host     string // lower-case name without a trailing dot, or a canonical IP; the domain of a wildcard
	Port     string // "" matches every port
	Wildcard bool   // *.domain: any name under domain, not domain itself
}

// ParseHostPattern parses host, host:port, [v6]:port or (with wildcardOK)
// *.domain[:port]. Names are lower-cased and lose a trailing dot, so equal
// hosts compare equal.
func ParseHostPattern(s string, wildcardOK bool) (HostPattern, error) {
	var p HostPattern
	if s == "" || strings.ContainsAny(s, " \t\r\n/?#@") {
		return p, fmt.Errorf("is not a host: want host, host:port or *.domain")
	}
	host := strings.ToLower(s)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && (strings.HasPrefix(host, "[") || strings.Count(host, ":") == 1) {
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		} else {
			h, port, err := net.SplitHostPort(host)
			if err != nil {
				return p, fmt.Errorf("is not a host: want host, host:port or *.domain")
			}
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
				return p, fmt.Errorf("has port %q: want 1 to 65535", port)
			}
			host, p.Port = h, port
		}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		rest = strings.TrimSuffix(rest, ".")
		switch {
		case !wildcardOK:
			return p, fmt.Errorf("is a wildcard, which is not allowed here")
		case !validDNSName(rest) || !strings.Contains(rest, "."):
			// "*.com" would open a whole top-level domain.
			return p, fmt.Errorf("is not a wildcard of a domain: want *.example.com")
		}
		p.Host, p.Wildcard = rest, true
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" {
		p.Host = a.Unmap().String()
		return p, nil
	}
	host = strings.TrimSuffix(host, ".")
	if !validDNSName(host) {
		return p, fmt.Errorf("is not a host name or IP address")
	}
	p.Host = host
	return p, nil
}

// Matches reports whether target (a parsed host:port, never a wildcard)
// is one the pattern allows.
func (p HostPattern) Matches(target HostPattern) bool {
	if p.Port != "" && p.Port != target.Port {
		return false
	}
	if p.Wildcard {
		return strings.HasSuffix(target.Host, "."+p.Host)
	}
	return target.Host == p.Host
}

// HostAllowed reports whether host:port is on the list of patterns;
// anything unparsable is refused.
func HostAllowed(patterns []string, host string, port int) bool {
	return MatchHost(patterns, net.JoinHostPort(host, strconv.Itoa(port)))
}

// MatchHost reports whether host (host or host:port, as in a URL) is on
// the list of patterns; anything unparsable is refused.
func MatchHost(patterns []string, host string) bool {
	target, err := ParseHostPattern(host, false)
	if err != nil {
		return false
	}
	for _, s := range patterns {
		if p, err := ParseHostPattern(s, true); err == nil && p.Matches(target) {
			return true
		}
	}
	return false
}

// String is the pattern's canonical form.
func (p HostPattern) String() string {
	h := p.Host
	if p.Wildcard {
		h = "*." + h
	}
	if strings.Contains(h, ":") { // IPv6
		h = "[" + h + "]"
	}
	if p.Port != "" {
		return h + ":" + p.Port
	}
	return h
}

// validDNSName checks lower-case LDH labels of 1–63 bytes, 253 in all.
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}
