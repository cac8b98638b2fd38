// Package sandbox owns the Docker backend of the hands: one container per
// session, reached through the Docker Engine API (github.com/moby/moby/client,
// negotiating down to the engine's API version); the environments those
// containers are made of; and, in sandbox/egress, the proxy that is their
// only way out.
//
// Lifecycle. A session's container is created at its first command, named
// and labelled after the deployment and the session so that a restarted
// gateway finds it again. Its workspace (/workspace) is a named volume that
// outlives the container's stops. After the idle timeout (its
// environment's, else the default) the container is stopped (the session
// hibernates; a time.AfterFunc timer per warm session, nothing at all per
// hibernated one) and the next command starts it again. Archiving a session
// removes its container and volume; Reap, at start-up, removes those whose
// session is gone or archived.
//
// Environments. A session's environment (Config.Environments) gives its
// image, packages, variables, resources and idle timeout, and to the proxy
// its allowlist and vault credentials. With the proxy on, every container
// runs a prepared image (prepare.go): the base image with the deployment's
// CA trusted and the packages installed, built once per recipe hash by a
// container on the sandbox network and ContainerCommit. A container is
// labelled with the hash of what it was made with (spec.go), and a stopped
// one whose environment changed is made again, its workspace kept.
//
// Skills. The skill versions a session's agent pins (Config.Skills) are
// mounted read-only at /skills/<name>/, each from a volume named after
// the skill version's content (skills.go): filled on this engine at its
// first use by copying the files into a container that is created and
// never started, reused by every later session, and reaped once no
// container mounts it. Files are root's and nobody's to write; the
// command user reads them and runs the executable ones.
//
// Hardening. Commands run as a non-root user (uid 1000) in a container with
// every capability dropped, no-new-privileges, a read-only root filesystem
// (writable: the workspace volume, and tmpfs /tmp and $HOME), pids, memory
// and CPU limits, Docker's init reaping zombies, no bind mount of any kind
// (so never the Docker socket; the one other mount is each skill's
// volume, read-only at /skills/<name>/) and no host network: containers sit on an
// internal bridge network of the deployment with inter-container traffic
// dropped. Without the egress proxy the host has no address on it, so they
// reach nothing. With it, the host holds the network's gateway address,
// where the proxy listens, and an iptables chain (firewall.go) accepts TCP
// to the proxy's port from the bridge and drops everything else, so the
// proxy is the one thing they reach; the proxy tells sessions apart by
// their containers' addresses.
//
// The container's main process (Docker's init and sleep) runs as another
// unprivileged user than commands do, so a command that runs past its
// timeout is stopped by killing every process of the command user; when
// even that cannot start (a fork bomb holds every pid), the container is
// killed and starts again at the next command, its workspace intact.
//
// Gateway. The package declares its settings (Options, LoadSettings), and
// Open connects the backend as the gateway runs it: the egress proxy on,
// off, or when left unset on where the gateway may set firewall rules;
// what a previous process left reaped; the proxy's decisions appended to
// the sessions' logs. The proxy's credentials resolve in the vault,
// except those a platform grants a session's sandbox for its repository
// (GitGranter, grants.go): they resolve at that platform and never leave
// the proxy.
package sandbox
