// Package deploy holds what ships the gateway beside its binary: the
// systemd unit (switchboard.service), and the test that the container
// image scripts/docker-image builds from the repository's Dockerfile
// serves. It has no code of its own.
package deploy
