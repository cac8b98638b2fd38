package main

import (
	"github.com/switchboardhq/switchboard/core/httpserver"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/core/pricing"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/providers/github"
	"github.com/switchboardhq/switchboard/providers/linear"
	"github.com/switchboardhq/switchboard/providers/slack"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/backend"
	"github.com/switchboardhq/switchboard/sessions/runtime"
	"github.com/switchboardhq/switchboard/sessions/skills"
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
	{Env: "SWITCHBOARD_ADMIN_TOKEN", Flag: "admin-token", Usage: "bearer token for /v1 (default: generated into <data dir>/admin-token; required with a PostgreSQL store)"},
	{Env: "SWITCHBOARD_MASTER_KEY", Flag: "master-key", Usage: "key encrypting tokens and vault items at rest (default: generated into <data dir>/master.key; required with a PostgreSQL store)"},
	{Env: "SWITCHBOARD_MODEL", Flag: "model", Usage: "model of the agent named default: anthropic/<model> or openai/<model>"},
	{Env: "SWITCHBOARD_SHUTDOWN_SECONDS", Flag: "shutdown-seconds", Default: "20", Usage: "how long a stop waits for in-flight work"},
	{Env: "SWITCHBOARD_SSE_HEARTBEAT_SECONDS", Flag: "sse-heartbeat-seconds", Default: "15", Usage: "interval of SSE heartbeat comments"},
	{Env: "SWITCHBOARD_MAX_BODY_BYTES", Flag: "max-body-bytes", Default: "1048576", Usage: "largest accepted API request body"},
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
	for _, list := range [][]settings.Option{serveOptions, backend.Options(), httpserver.Options(), settings.LogOptions(), runtime.Options(), mcpbridge.Options(), sandbox.Options(), webhooks.Options(), skills.Options(), pricing.Options(), models.Options(), attach.Options(), providers.Options(modules())} {
		opts = append(opts, list...)
	}
	return opts
}
