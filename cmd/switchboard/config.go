package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// option is one setting: an environment variable with a matching flag.
type option struct {
	env   string
	flag  string
	def   string
	usage string
}

// serveOptions lists every setting of serve (with slackOptions,
// githubOptions and linearOptions). The tables of docs/configuration.md
// mirror them.
var serveOptions = []option{
	{"SWITCHBOARD_ADDR", "addr", "127.0.0.1:8080", "listen address"},
	{"SWITCHBOARD_DATA_DIR", "data-dir", "./switchboard-data", "directory of the bbolt file and generated keys"},
	{"SWITCHBOARD_PUBLIC_URL", "public-url", "", "base URL for OAuth redirects and links (default http://<addr>)"},
	{"SWITCHBOARD_ADMIN_TOKEN", "admin-token", "", "bearer token for /v1 (default: generated into <data dir>/admin-token)"},
	{"SWITCHBOARD_MASTER_KEY", "master-key", "", "key encrypting tokens and vault items at rest (default: generated into <data dir>/master.key)"},
	{"SWITCHBOARD_MODEL", "model", "", "model of the agent named default: anthropic/<model> or openai/<model>"},
	{"SWITCHBOARD_WORKERS", "workers", "8", "sessions run at once"},
	{"SWITCHBOARD_MAX_STEPS", "max-steps", "50", "default model calls per turn"},
	{"SWITCHBOARD_TURN_SECONDS", "turn-seconds", "900", "default wall seconds per turn"},
	{"SWITCHBOARD_MAX_TOKENS", "max-tokens", "2000000", "default tokens (input+output) per turn"},
	{"SWITCHBOARD_CONTEXT_WINDOW", "context-window", "0", "model context window in tokens (0: 200000 for anthropic, 128000 for openai)"},
	{"SWITCHBOARD_COMPACT_FRACTION", "compact-fraction", "0.8", "compact the context when it passes this fraction of the window (0 disables)"},
	{"SWITCHBOARD_SHUTDOWN_SECONDS", "shutdown-seconds", "20", "how long a stop waits for in-flight work"},
	{"SWITCHBOARD_SSE_HEARTBEAT_SECONDS", "sse-heartbeat-seconds", "15", "interval of SSE heartbeat comments"},
	{"SWITCHBOARD_MAX_BODY_BYTES", "max-body-bytes", "1048576", "largest accepted API request body"},
	{"SWITCHBOARD_SANDBOX", "sandbox", "", "docker or none (default: docker when a Docker engine answers and has the image)"},
	{"SWITCHBOARD_SANDBOX_IMAGE", "sandbox-image", "switchboard-sandbox:latest", "image of the sandboxes (build it with scripts/sandbox-image --full)"},
	{"SWITCHBOARD_SANDBOX_IDLE_SECONDS", "sandbox-idle-seconds", "300", "stop a session's sandbox after this long unused (it starts again at the next command)"},
	{"SWITCHBOARD_SANDBOX_MEMORY_MB", "sandbox-memory-mb", "2048", "memory limit of each sandbox, in MiB"},
	{"SWITCHBOARD_SANDBOX_PIDS", "sandbox-pids", "512", "process limit of each sandbox"},
	{"SWITCHBOARD_SANDBOX_CPUS", "sandbox-cpus", "1", "CPU limit of each sandbox, in CPUs"},
	{"SWITCHBOARD_SANDBOX_COMMAND_SECONDS", "sandbox-command-seconds", "600", "longest a bash command may run; the model may ask for less (default 120)"},
	{"SWITCHBOARD_SANDBOX_BUILD_SECONDS", "sandbox-build-seconds", "900", "longest building an environment's prepared image may take"},
	{"SWITCHBOARD_EGRESS", "egress", "", "on or off: the egress proxy, sandboxes' only way out (default: on when the gateway may set firewall rules, i.e. runs as root)"},
	{"SWITCHBOARD_EGRESS_PORT", "egress-port", "3128", "port of the egress proxy, on the sandbox network's gateway address only"},
	{"SWITCHBOARD_EGRESS_ALLOW_PRIVATE", "egress-allow-private", "false", "let the egress proxy reach loopback, private and link-local upstreams"},
	{"SWITCHBOARD_EGRESS_CA_FILE", "egress-ca-file", "", "PEM file of extra root CAs the egress proxy trusts upstream (beside the system's)"},
	{"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "webhook-allow-private", "false", "let webhook deliveries reach loopback, private and link-local addresses"},
	{"SWITCHBOARD_WEBHOOK_WORKERS", "webhook-workers", "16", "webhook deliveries in flight at once"},
	{"SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS", "webhook-timeout-seconds", "10", "how long one delivery attempt may take; a slower answer is a failure"},
	{"SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", "webhook-backoff-base-ms", "1000", "ceiling of the first retry's wait; it doubles per failure (full jitter)"},
	{"SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS", "webhook-backoff-max-seconds", "3600", "the retry wait's ceiling stops growing here"},
	{"SWITCHBOARD_WEBHOOK_HORIZON_SECONDS", "webhook-horizon-seconds", "86400", "how long after its first attempt a delivery is retried before it is dead-lettered"},
	{"SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", "webhook-pause-seconds", "259200", "pause a destination that has failed this long without a success (0: never)"},
	{"SWITCHBOARD_LOG_LEVEL", "log-level", "info", "debug, info, warn or error"},
	{"SWITCHBOARD_LOG_FORMAT", "log-format", "text", "text or json"},
}

// settings are parsed option values, by environment variable name.
type settings map[string]string

// parseSettings reads flags over environment over defaults.
func parseSettings(name string, opts []option, args []string, getenv func(string) string) (settings, *flag.FlagSet, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	vals := map[string]*string{}
	for _, o := range opts {
		def := o.def
		if v := getenv(o.env); v != "" {
			def = v
		}
		vals[o.env] = fs.String(o.flag, def, o.usage+" ($"+o.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return nil, fs, err
	}
	s := settings{}
	for k, v := range vals {
		s[k] = strings.TrimSpace(*v)
	}
	return s, fs, nil
}

func (s settings) int(name string, min int) (int, error) {
	n, err := strconv.Atoi(s[name])
	if err != nil || n < min {
		return 0, fmt.Errorf("%s=%q: want a whole number ≥ %d", name, s[name], min)
	}
	return n, nil
}

func (s settings) float(name string, min, max float64) (float64, error) {
	f, err := strconv.ParseFloat(s[name], 64)
	if err != nil || f < min || f > max {
		return 0, fmt.Errorf("%s=%q: want a number from %g to %g", name, s[name], min, max)
	}
	return f, nil
}

func (s settings) duration(name string) (time.Duration, error) {
	n, err := s.int(name, 1)
	return time.Duration(n) * time.Second, err
}

// logger builds the process logger from the log settings.
func (s settings) logger(w *os.File) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s["SWITCHBOARD_LOG_LEVEL"])); err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_LOG_LEVEL=%q: want debug, info, warn or error", s["SWITCHBOARD_LOG_LEVEL"])
	}
	ho := &slog.HandlerOptions{Level: level}
	switch s["SWITCHBOARD_LOG_FORMAT"] {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("SWITCHBOARD_LOG_FORMAT=%q: want text or json", s["SWITCHBOARD_LOG_FORMAT"])
}
