package main

import (
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/github"
	"github.com/switchboardhq/switchboard/providers/linear"
	"github.com/switchboardhq/switchboard/providers/slack"
	"github.com/switchboardhq/switchboard/sessions/runtime"
	"github.com/switchboardhq/switchboard/webhooks"
)

// The gateway's listen address and data directory by default; the CLI
// looks for the server and its token file there too.
const (
	defaultAddr    = "127.0.0.1:8080"
	defaultDataDir = "./switchboard-data"
)

// serveOptions lists the gateway's own settings; allServeOptions adds the
// others serve runs with. docs/configuration.md mirrors them (a test
// checks it).
var serveOptions = []settings.Option{
	{Env: "SWITCHBOARD_ADDR", Flag: "addr", Default: defaultAddr, Usage: "listen address"},
	{Env: "SWITCHBOARD_DATA_DIR", Flag: "data-dir", Default: defaultDataDir, Usage: "directory of the bbolt file and generated keys"},
	{Env: "SWITCHBOARD_PUBLIC_URL", Flag: "public-url", Usage: "base URL for OAuth redirects and links (default http://<addr>)"},
	{Env: "SWITCHBOARD_ADMIN_TOKEN", Flag: "admin-token", Usage: "bearer token for /v1 (default: generated into <data dir>/admin-token)"},
	{Env: "SWITCHBOARD_MASTER_KEY", Flag: "master-key", Usage: "key encrypting tokens and vault items at rest (default: generated into <data dir>/master.key)"},
	{Env: "SWITCHBOARD_MODEL", Flag: "model", Usage: "model of the agent named default: anthropic/<model> or openai/<model>"},
	{Env: "SWITCHBOARD_SHUTDOWN_SECONDS", Flag: "shutdown-seconds", Default: "20", Usage: "how long a stop waits for in-flight work"},
	{Env: "SWITCHBOARD_SSE_HEARTBEAT_SECONDS", Flag: "sse-heartbeat-seconds", Default: "15", Usage: "interval of SSE heartbeat comments"},
	{Env: "SWITCHBOARD_MAX_BODY_BYTES", Flag: "max-body-bytes", Default: "1048576", Usage: "largest accepted API request body"},
	{Env: "SWITCHBOARD_SANDBOX", Flag: "sandbox", Usage: "docker or none (default: docker when a Docker engine answers and has the image)"},
	{Env: "SWITCHBOARD_SANDBOX_IMAGE", Flag: "sandbox-image", Default: "switchboard-sandbox:latest", Usage: "image of the sandboxes (build it with scripts/sandbox-image --full)"},
	{Env: "SWITCHBOARD_SANDBOX_IDLE_SECONDS", Flag: "sandbox-idle-seconds", Default: "300", Usage: "stop a session's sandbox after this long unused (it starts again at the next command)"},
	{Env: "SWITCHBOARD_SANDBOX_MEMORY_MB", Flag: "sandbox-memory-mb", Default: "2048", Usage: "memory limit of each sandbox, in MiB"},
	{Env: "SWITCHBOARD_SANDBOX_PIDS", Flag: "sandbox-pids", Default: "512", Usage: "process limit of each sandbox"},
	{Env: "SWITCHBOARD_SANDBOX_CPUS", Flag: "sandbox-cpus", Default: "1", Usage: "CPU limit of each sandbox, in CPUs"},
	{Env: "SWITCHBOARD_SANDBOX_COMMAND_SECONDS", Flag: "sandbox-command-seconds", Default: "600", Usage: "longest a bash command may run; the model may ask for less (default 120)"},
	{Env: "SWITCHBOARD_SANDBOX_BUILD_SECONDS", Flag: "sandbox-build-seconds", Default: "900", Usage: "longest building an environment's prepared image may take"},
	{Env: "SWITCHBOARD_EGRESS", Flag: "egress", Usage: "on or off: the egress proxy, sandboxes' only way out (default: on when the gateway may set firewall rules, i.e. runs as root)"},
	{Env: "SWITCHBOARD_EGRESS_PORT", Flag: "egress-port", Default: "3128", Usage: "port of the egress proxy, on the sandbox network's gateway address only"},
	{Env: "SWITCHBOARD_EGRESS_ALLOW_PRIVATE", Flag: "egress-allow-private", Default: "false", Usage: "let the egress proxy reach loopback, private and link-local upstreams"},
	{Env: "SWITCHBOARD_EGRESS_CA_FILE", Flag: "egress-ca-file", Usage: "PEM file of extra root CAs the egress proxy trusts upstream (beside the system's)"},
}

// modules are the platforms the gateway ships, in the order they are
// wired.
func modules() []providers.Module {
	return []providers.Module{slack.Module(), github.Module(), linear.Module()}
}

// allServeOptions is every setting of serve: its own, the log settings,
// and those the packages it wires declare.
func allServeOptions() []settings.Option {
	var opts []settings.Option
	for _, list := range [][]settings.Option{serveOptions, settings.LogOptions(), runtime.Options(), webhooks.Options(), providers.Options(modules())} {
		opts = append(opts, list...)
	}
	return opts
}
