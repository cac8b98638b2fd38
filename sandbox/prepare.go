package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// PreparedRepo is the repository of prepared images: an environment's
// image with the deployment's CA trusted and its packages installed.
const PreparedRepo = "switchboard-env"

// prepareVersion changes whenever the build below changes what it makes.
const prepareVersion = "2"

// failedBuildTTL: a build that failed is not tried again for this long,
// so that every command of a session does not pay for it again.
const failedBuildTTL = time.Minute

// recipe is everything that decides a prepared image's content; its hash
// tags the image. An environment's variables, network policy and
// resources are not in it: they apply when a container is created.
type recipe struct {
	Version  string        `json:"version"`
	Base     string        `json:"base"` // image id, so a rebuilt base makes a new image
	CA       string        `json:"ca"`   // fingerprint of the deployment's CA
	Packages core.Packages `json:"packages"`
	// Registries are where the packages of a manager come from, when not
	// its public registry (only for the managers it has packages of).
	Registries map[string]string `json:"registries,omitempty"`
}

type failedBuild struct {
	err error
	at  time.Time
}

// prepared returns the image a session of env runs (and its id): the base
// image as is without the egress proxy, else the prepared image of its
// recipe, built on first use. Concurrent sessions wait for one build.
func (d *Docker) prepared(ctx context.Context, env *core.Environment) (string, string, error) {
	base := d.cfg.Image
	var pk core.Packages
	if env != nil {
		if env.Image != "" {
			base = env.Image
		}
		pk = env.Packages
	}
	bi, err := d.cli.ImageInspect(ctx, base)
	if cerrdefs.IsNotFound(err) {
		return "", "", fmt.Errorf("%w: %s (nothing is pulled): %w", ErrNoImage, base, core.ErrSandboxUnavailable)
	}
	if err != nil {
		return "", "", fmt.Errorf("inspect image %s: %w", base, err)
	}
	if d.egress == nil {
		if !pk.Empty() {
			return "", "", fmt.Errorf("environment %s installs packages, which needs the egress proxy, and it is off: %w", env.ID, core.ErrSandboxUnavailable)
		}
		return base, bi.ID, nil
	}
	rc := recipe{Version: prepareVersion, Base: bi.ID, CA: d.egress.caFP, Packages: pk}
	for _, m := range pk.Managers() {
		if reg := d.cfg.Egress.registry(m.Manager); reg != "" && len(m.Packages) > 0 {
			if rc.Registries == nil {
				rc.Registries = map[string]string{}
			}
			rc.Registries[m.Manager] = reg
		}
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(raw)
	h := hex.EncodeToString(sum[:])[:16]
	tag := PreparedRepo + ":" + h
	if pi, err := d.cli.ImageInspect(ctx, tag); err == nil {
		return tag, pi.ID, nil
	}
	d.buildMu.Lock()
	if f, ok := d.failed[h]; ok && time.Since(f.at) < failedBuildTTL {
		d.buildMu.Unlock()
		return "", "", f.err
	}
	d.buildMu.Unlock()
	// The build runs detached: a turn that gives up waiting does not
	// waste it, and the next command finds the image.
	ch := d.flights.DoChan(h, func() (any, error) {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.BuildTimeout)
		defer cancel()
		id, err := d.build(bctx, bi.ID, tag, h, env)
		if err != nil {
			d.buildMu.Lock()
			d.failed[h] = failedBuild{err, time.Now()}
			d.buildMu.Unlock()
		}
		return id, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", "", res.Err
		}
		return tag, res.Val.(string), nil
	case <-ctx.Done():
		return "", "", fmt.Errorf("waiting for the environment's image to build: %w", ctx.Err())
	}
}

// build runs the recipe in a container of the base image on the sandbox
// network (through the proxy, under a policy of the package registries
// and the environment's allowlist) and commits the result.
func (d *Docker) build(ctx context.Context, baseID, tag, h string, env *core.Environment) (string, error) {
	start := time.Now()
	d.builds.Add(1)
	name := d.cfg.buildName(h)
	// A build cut short by a crash leaves its container.
	_, _ = d.cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true})
	policy := policyOf(env)
	var pk core.Packages
	if env != nil {
		pk = env.Packages
	}
	var buildEnv []string
	for _, m := range pk.Managers() {
		if len(m.Packages) == 0 {
			continue
		}
		hosts := d.cfg.Egress.PackageHosts[m.Manager]
		if reg := d.cfg.Egress.registry(m.Manager); reg != "" {
			u, err := url.Parse(reg)
			if err != nil || u.Host == "" {
				return "", fmt.Errorf("%s registry %q: want an http(s) URL", m.Manager, reg)
			}
			hosts = []string{u.Host}
			buildEnv = append(buildEnv, registryEnv(m.Manager, u)...)
		}
		policy.Hosts = append(slices.Clone(policy.Hosts), hosts...)
	}
	args := []string{"sh", "-c", buildScript(d.egress.url, d.egress.caPEM), "sh"}
	for _, m := range pk.Managers() {
		args = append(args, strings.Join(m.Packages, " "))
	}
	mem := max(d.cfg.Limits.MemoryBytes, 1<<30) // compilers and npm want room
	pids := max(d.cfg.Limits.Pids, 1024)
	c, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: name,
		Config: &container.Config{
			Image:      baseID,
			User:       "0:0", // package managers install as root; only here
			Entrypoint: args[:1],
			Cmd:        args[1:],
			Env:        buildEnv,
			WorkingDir: "/",
			Labels:     d.cfg.labels("", "build"),
		},
		HostConfig: &container.HostConfig{
			NetworkMode: container.NetworkMode(d.net.name),
			SecurityOpt: []string{"no-new-privileges"},
			CapDrop:     []string{"NET_RAW", "MKNOD", "AUDIT_WRITE"},
			Resources:   container.Resources{Memory: mem, MemorySwap: mem, NanoCPUs: d.cfg.Limits.NanoCPUs, PidsLimit: &pids},
		},
	})
	if err != nil {
		return "", fmt.Errorf("create the build of %s: %w", tag, err)
	}
	defer func() {
		_, _ = d.cli.ContainerRemove(context.WithoutCancel(ctx), c.ID, client.ContainerRemoveOptions{Force: true})
	}()
	d.buildMu.Lock()
	d.buildPolicies[name] = policy
	d.buildMu.Unlock()
	defer func() {
		d.buildMu.Lock()
		delete(d.buildPolicies, name)
		d.buildMu.Unlock()
	}()
	wait := d.cli.ContainerWait(ctx, c.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if err := d.startContainer(ctx, c.ID); err != nil {
		return "", fmt.Errorf("start the build of %s: %w", tag, err)
	}
	select {
	case err := <-wait.Error:
		return "", fmt.Errorf("the build of %s: %w", tag, err)
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			return "", buildFailure(pk, int(r.StatusCode), d.containerLogs(ctx, c.ID, 30))
		}
	}
	bi, err := d.cli.ImageInspect(ctx, baseID)
	if err != nil {
		return "", err
	}
	// The base image's own settings, not the build container's (root, the
	// script): commit fills only what is left empty, hence the explicit
	// empty entrypoint and a command.
	var cfg container.Config
	if bi.Config != nil {
		cfg = container.Config{User: bi.Config.User, Env: bi.Config.Env, Entrypoint: bi.Config.Entrypoint, Cmd: bi.Config.Cmd, WorkingDir: bi.Config.WorkingDir, Labels: bi.Config.Labels}
	}
	cmd := cfg.Cmd
	if len(cmd) == 0 {
		cmd = []string{"sh"}
	}
	labels := maps.Clone(cfg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, d.cfg.labels("", "environment"))
	labels[LabelRecipe] = h
	res, err := d.cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{
		Reference: tag,
		Comment:   "switchboard prepared environment image",
		Config: &container.Config{
			User:       cfg.User,
			Env:        cfg.Env,
			Entrypoint: append([]string{}, cfg.Entrypoint...),
			Cmd:        cmd,
			WorkingDir: cfg.WorkingDir,
			Labels:     labels,
		},
	})
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", tag, err)
	}
	d.log.Info("environment image built", "image", tag, "packages", !pk.Empty(), "took", time.Since(start).Round(time.Millisecond).String())
	return res.ID, nil
}

// Exit statuses of the build script when a manager's installation
// fails: exitManager plus the manager's index in core.Packages.Managers.
const exitManager = 10

// buildFailure names what failed from the build script's exit status:
// the manager and its packages, then the build's last lines (the
// manager's own account of why).
func buildFailure(pk core.Packages, code int, logs string) error {
	ms := pk.Managers()
	if i := code - exitManager; i >= 0 && i < len(ms) {
		m := ms[i]
		return fmt.Errorf("building the environment's image failed: %s could not install %s (exit %d):\n%s", m.Manager, strings.Join(m.Packages, " "), code, logs)
	}
	return fmt.Errorf("building the environment's image failed (exit %d):\n%s", code, logs)
}

// registry is the registry the build of a manager's packages uses
// instead of the public one, or "".
func (e *EgressConfig) registry(manager string) string {
	switch manager {
	case "pip":
		return e.PipIndex
	case "npm":
		return e.NPMRegistry
	case "go":
		return e.GoProxy
	case "cargo":
		return e.CargoIndex
	case "gem":
		return e.GemSource
	}
	return ""
}

// registryEnv are the variables that point a manager at the registry u.
// A Go proxy of one's own serves modules the public checksum database
// does not know (and its host is not reachable then): it is trusted as
// the registry is. pip ignores a plain-HTTP index it is not told to
// trust. cargo and gem take theirs from the build script.
func registryEnv(manager string, u *url.URL) []string {
	switch manager {
	case "pip":
		env := []string{"PIP_INDEX_URL=" + u.String()}
		if u.Scheme == "http" {
			env = append(env, "PIP_TRUSTED_HOST="+u.Host)
		}
		return env
	case "npm":
		return []string{"npm_config_registry=" + u.String()}
	case "go":
		return []string{"GOPROXY=" + u.String(), "GOSUMDB=off"}
	case "cargo":
		return []string{"SWITCHBOARD_CARGO_INDEX=sparse+" + u.String()}
	case "gem":
		return []string{"SWITCHBOARD_GEM_SOURCE=" + u.String()}
	}
	return nil
}

// buildScript trusts the CA, then installs each
// manager's packages, given as $1 (apt) to $6 (gem), space-separated.
// Package names were validated (no option, no metacharacter) and are
// split by the shell with globbing off. The CA goes where
// update-ca-certificates looks (so a later run, by apt installing
// ca-certificates, keeps it), into the bundle every tool reads and under
// its hash for OpenSSL's directory lookup; running update-ca-certificates
// itself would cost seconds of rehashing every root. A manager that
// fails ends the script with exitManager plus its index, after a line
// naming what it was installing.
//
// cargo before 1.68 (Debian 12 has 1.65) speaks the sparse protocol,
// the only one the proxy's allowlist lets through (crates.io's git index
// is on GitHub), only as an unstable feature: it is enabled there.
func buildScript(proxyURL string, caPEM []byte) string {
	return fmt.Sprintf(`set -eu
export http_proxy=%[1]s https_proxy=%[1]s HTTP_PROXY=%[1]s HTTPS_PROXY=%[1]s no_proxy= NO_PROXY=
export DEBIAN_FRONTEND=noninteractive
mkdir -p %[2]s
cat > %[3]s <<'SWITCHBOARD_CA'
%[4]sSWITCHBOARD_CA
mkdir -p /etc/ssl/certs
cat %[3]s >> %[5]s
if command -v openssl >/dev/null 2>&1; then ln -sf %[3]s /etc/ssl/certs/$(openssl x509 -hash -noout -in %[3]s).0; fi
export SSL_CERT_FILE=%[5]s REQUESTS_CA_BUNDLE=%[5]s PIP_CERT=%[5]s NODE_EXTRA_CA_CERTS=%[3]s CARGO_HTTP_CAINFO=%[5]s
set -f
apt=$1 pip=$2 npm=$3 go=$4 cargo=$5 gem=$6
fail() { code=$1; shift; echo "switchboard: $*" >&2; exit $code; }
need() { command -v "$1" >/dev/null 2>&1 || fail $2 "$3 packages need $1 in the image (apt can bring it: $4)"; }
if [ -n "$apt" ]; then
	{ apt-get update -q && apt-get install -y -q --no-install-recommends $apt; } || fail 10 "apt-get could not install $apt"
	apt-get clean
	rm -rf /var/lib/apt/lists/*
fi
if [ -n "$pip" ]; then
	python3 -m pip --version >/dev/null 2>&1 || fail 11 "pip packages need python3 and its pip in the image (apt can bring them: python3-pip)"
	PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir --disable-pip-version-check $pip || fail 11 "pip could not install $pip"
fi
if [ -n "$npm" ]; then
	need npm 12 npm npm
	{ npm install -g $npm && npm cache clean --force; } || fail 12 "npm could not install $npm"
fi
if [ -n "$go" ]; then
	need go 13 go golang-go
	for m in $go; do GOBIN=/usr/local/bin GOPATH=/tmp/switchboard-go GOCACHE=/tmp/switchboard-go/cache go install "$m" || fail 13 "go could not install $m"; done
	rm -rf /tmp/switchboard-go
fi
if [ -n "$cargo" ]; then
	need cargo 14 cargo cargo
	export CARGO_HOME=/tmp/switchboard-cargo CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse
	mkdir -p "$CARGO_HOME"
	if [ -n "${SWITCHBOARD_CARGO_INDEX:-}" ]; then
		printf '[source.crates-io]\nreplace-with = "switchboard"\n[source.switchboard]\nregistry = "%%s"\n' "$SWITCHBOARD_CARGO_INDEX" > "$CARGO_HOME/config.toml"
	fi
	z=
	minor=$(cargo --version | sed -n 's/^cargo 1\.\([0-9]*\)\..*/\1/p')
	if [ "${minor:-99}" -lt 68 ]; then z="-Z sparse-registry"; export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly; fi
	cargo $z install --root /usr/local $cargo || fail 14 "cargo could not install $cargo"
	rm -rf "$CARGO_HOME"
fi
if [ -n "$gem" ]; then
	need gem 15 gem ruby
	if [ -n "${SWITCHBOARD_GEM_SOURCE:-}" ]; then set -- --clear-sources --source "$SWITCHBOARD_GEM_SOURCE"; else set --; fi
	gem install --no-document "$@" $gem || fail 15 "gem could not install $gem"
fi
`, proxyURL, "/usr/local/share/ca-certificates", sandboxCAFile, caPEM, sandboxCABundle)
}
