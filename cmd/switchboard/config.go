package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/httpserver"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/core/models/embeddings"
	"github.com/switchboardhq/switchboard/core/pricing"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/providers/github"
	"github.com/switchboardhq/switchboard/providers/gitlab"
	"github.com/switchboardhq/switchboard/providers/linear"
	"github.com/switchboardhq/switchboard/providers/slack"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/engine/acpclient"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/skills"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/surfaces/cli"
	"github.com/switchboardhq/switchboard/sessions/webtools"
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
	return []providers.Module{slack.Module(), github.Module(), linear.Module(), gitlab.Module()}
}

// allServeOptions is every setting of serve: its own, the log settings,
// and those the packages it wires declare.
func allServeOptions() []settings.Option {
	var opts []settings.Option
	for _, list := range [][]settings.Option{serveOptions, backend.Options(), httpserver.Options(), settings.LogOptions(), runtime.Options(), acpclient.Options(), mcpbridge.Options(), sandbox.Options(), webhooks.Options(), skills.Options(), pricing.Options(), models.Options(), embeddings.Options(), attach.Options(), webtools.Options(), providers.Options(modules())} {
		opts = append(opts, list...)
	}
	return opts
}

// settingPrefixes are the prefixes of the variables serve reads, its own
// and the platforms'; one of them that is no setting is most likely a
// typo.
func settingPrefixes() []string {
	return append([]string{"SWITCHBOARD_"}, providers.PlatformsOf(modules()).SettingPrefixes()...)
}

// warnUnknown warns, once each, of the variables that look like settings
// and are none, naming the closest one. The CLI's own variables and the
// test builds' (SWITCHBOARD_TEST_*) are known.
func warnUnknown(env command.Env, log *slog.Logger) {
	if env.Environ == nil {
		return
	}
	for _, u := range settings.UnknownVariables(env.Environ(), settingPrefixes(), allServeOptions(), cli.Variables(), []string{"SWITCHBOARD_TEST_"}) {
		log.Warn(fmt.Sprintf("unknown variable %s is ignored; did you mean %s?", u.Name, u.Closest))
	}
}

// checkAddr refuses a listen address that cannot be listened on for its
// form, before anything is written.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("SWITCHBOARD_ADDR=%q: want host:port", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("SWITCHBOARD_ADDR=%q: port %q: want a number from 0 to 65535", addr, port)
	}
	return nil
}
