package main

import (
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sandbox"
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
	{Env: "SWITCHBOARD_WORKERS", Flag: "workers", Default: "8", Usage: "sessions run at once"},
	{Env: "SWITCHBOARD_MAX_STEPS", Flag: "max-steps", Default: "50", Usage: "default model calls per turn"},
	{Env: "SWITCHBOARD_TURN_SECONDS", Flag: "turn-seconds", Default: "900", Usage: "default wall seconds per turn"},
	{Env: "SWITCHBOARD_MAX_TOKENS", Flag: "max-tokens", Default: "2000000", Usage: "default tokens (input+output) per turn"},
	{Env: "SWITCHBOARD_CONTEXT_WINDOW", Flag: "context-window", Default: "0", Usage: "model context window in tokens (0: 200000 for anthropic, 128000 for openai)"},
	{Env: "SWITCHBOARD_COMPACT_FRACTION", Flag: "compact-fraction", Default: "0.8", Usage: "compact the context when it passes this fraction of the window (0 disables)"},
	{Env: "SWITCHBOARD_SHUTDOWN_SECONDS", Flag: "shutdown-seconds", Default: "20", Usage: "how long a stop waits for in-flight work"},
	{Env: "SWITCHBOARD_SSE_HEARTBEAT_SECONDS", Flag: "sse-heartbeat-seconds", Default: "15", Usage: "interval of SSE heartbeat comments"},
	{Env: "SWITCHBOARD_MAX_BODY_BYTES", Flag: "max-body-bytes", Default: "1048576", Usage: "largest accepted API request body"},
	{Env: "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", Flag: "webhook-allow-private", Default: "false", Usage: "let webhook deliveries reach loopback, private and link-local addresses"},
	{Env: "SWITCHBOARD_WEBHOOK_WORKERS", Flag: "webhook-workers", Default: "16", Usage: "webhook deliveries in flight at once"},
	{Env: "SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS", Flag: "webhook-timeout-seconds", Default: "10", Usage: "how long one delivery attempt may take; a slower answer is a failure"},
	{Env: "SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", Flag: "webhook-backoff-base-ms", Default: "1000", Usage: "ceiling of the first retry's wait; it doubles per failure (full jitter)"},
	{Env: "SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS", Flag: "webhook-backoff-max-seconds", Default: "3600", Usage: "the retry wait's ceiling stops growing here"},
	{Env: "SWITCHBOARD_WEBHOOK_HORIZON_SECONDS", Flag: "webhook-horizon-seconds", Default: "86400", Usage: "how long after its first attempt a delivery is retried before it is dead-lettered"},
	{Env: "SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", Flag: "webhook-pause-seconds", Default: "259200", Usage: "pause a destination that has failed this long without a success (0: never)"},
}

// allServeOptions is every setting of serve: its own, the log settings,
// the sandbox's and the providers'.
func allServeOptions() []settings.Option {
	var opts []settings.Option
	for _, list := range [][]settings.Option{serveOptions, settings.LogOptions(), sandbox.Options(), slackOptions, githubOptions, linearOptions} {
		opts = append(opts, list...)
	}
	return opts
}
