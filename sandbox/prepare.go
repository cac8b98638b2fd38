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
const prepareVersion = "1"

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
	// NPMRegistry is where npm packages come from, when not the default.
	NPMRegistry string `json:"npm_registry,omitempty"`
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
	if len(pk.Npm) > 0 {
		rc.NPMRegistry = d.cfg.Egress.NPMRegistry
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
		if reg := d.cfg.Egress.NPMRegistry; m.Manager == "npm" && reg != "" {
			u, err := url.Parse(reg)
			if err != nil {
				return "", fmt.Errorf("npm registry %q: %w", reg, err)
			}
			hosts = []string{u.Host}
			buildEnv = append(buildEnv, "npm_config_registry="+reg)
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
			return "", fmt.Errorf("building the environment's image failed (exit %d):\n%s", r.StatusCode, d.containerLogs(ctx, c.ID, 30))
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

// buildScript trusts the CA, then installs each
// manager's packages, given as $1 (apt) to $6 (gem), space-separated.
// Package names were validated (no option, no metacharacter) and are
// split by the shell with globbing off. The CA goes where
// update-ca-certificates looks (so a later run, by apt installing
// ca-certificates, keeps it), into the bundle every tool reads and under
// its hash for OpenSSL's directory lookup; running update-ca-certificates
// itself would cost seconds of rehashing every root.
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
export SSL_CERT_FILE=%[5]s REQUESTS_CA_BUNDLE=%[5]s PIP_CERT=%[5]s NODE_EXTRA_CA_CERTS=%[3]s
set -f
apt=$1 pip=$2 npm=$3 go=$4 cargo=$5 gem=$6
if [ -n "$apt" ]; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends $apt
	apt-get clean
	rm -rf /var/lib/apt/lists/*
fi
if [ -n "$pip" ]; then PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir $pip; fi
if [ -n "$npm" ]; then npm install -g $npm && npm cache clean --force; fi
if [ -n "$go" ]; then
	for m in $go; do GOBIN=/usr/local/bin GOPATH=/tmp/switchboard-go GOCACHE=/tmp/switchboard-go/cache go install "$m"; done
	rm -rf /tmp/switchboard-go
fi
if [ -n "$cargo" ]; then CARGO_HOME=/tmp/switchboard-cargo cargo install --root /usr/local $cargo; rm -rf /tmp/switchboard-cargo; fi
if [ -n "$gem" ]; then gem install --no-document $gem; fi
`, proxyURL, "/usr/local/share/ca-certificates", sandboxCAFile, caPEM, sandboxCABundle)
}
