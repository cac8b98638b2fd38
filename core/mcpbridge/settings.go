package mcpbridge

import (
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the MCP bridge's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: StdioAllowEnv, Flag: "mcp-stdio-allow", Usage: "comma-separated absolute paths of the executables stdio MCP servers may run (default: none)"},
		{Env: "SWITCHBOARD_MCP_IDLE_SECONDS", Flag: "mcp-idle-seconds", Default: "300", Usage: "close a session's MCP connections (and in-process platform clients) after this long unused"},
	}
}

// LoadIdleTimeout reads the idle timeout of Options.
func LoadIdleTimeout(s settings.Values) (time.Duration, error) {
	return s.Duration("SWITCHBOARD_MCP_IDLE_SECONDS")
}
