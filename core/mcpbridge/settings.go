package mcpbridge

import "github.com/switchboardhq/switchboard/core/settings"

// Options are the MCP bridge's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: StdioAllowEnv, Flag: "mcp-stdio-allow", Usage: "comma-separated absolute paths of the executables stdio MCP servers may run (default: none)"},
		{Env: "SWITCHBOARD_MCP_IDLE_SECONDS", Flag: "mcp-idle-seconds", Default: "300", Usage: "close a session's MCP connections (and in-process platform clients) after this long unused"},
	}
}

// LoadConfig reads Options into a Config; the caller adds the credential
// source, the client info and the logger.
func LoadConfig(s settings.Values) (Config, error) {
	var c Config
	var err error
	if c.IdleTimeout, err = s.Duration("SWITCHBOARD_MCP_IDLE_SECONDS"); err != nil {
		return c, err
	}
	c.StdioAllow, err = LoadStdioAllow(s)
	return c, err
}
