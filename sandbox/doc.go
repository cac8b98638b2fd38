// Package sandbox owns the Docker backend of the hands: one container per
// session, reached through the Docker Engine API (github.com/moby/moby/client,
// negotiating down to the engine's API version).
//
// Lifecycle. A session's container is created at its first command, named
// and labelled after the deployment and the session so that a restarted
// gateway finds it again. Its workspace (/workspace) is a named volume that
// outlives the container's stops. After the idle timeout the container is
// stopped (the session hibernates; a time.AfterFunc timer per warm session,
// nothing at all per hibernated one) and the next command starts it again.
// Archiving a session removes its container and volume; Reap, at start-up,
// removes those whose session is gone or archived.
//
// Hardening. Commands run as a non-root user (uid 1000) in a container with
// every capability dropped, no-new-privileges, a read-only root filesystem
// (writable: the workspace volume, and tmpfs /tmp and $HOME), pids, memory
// and CPU limits, Docker's init reaping zombies, no bind mount of any kind
// (so never the Docker socket) and no host network: containers sit on an
// internal bridge network of the deployment, with inter-container traffic
// dropped and no IPv4 address on the host side, so they reach nothing. The
// egress proxy (a later issue) plugs in through Config.Network and
// Config.Env (HTTP_PROXY and friends).
//
// The container's main process (Docker's init and sleep) runs as another
// unprivileged user than commands do, so a command that runs past its
// timeout is stopped by killing every process of the command user; when
// even that cannot start (a fork bomb holds every pid), the container is
// killed and starts again at the next command, its workspace intact.
package sandbox
