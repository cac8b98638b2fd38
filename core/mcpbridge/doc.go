// Package mcpbridge turns MCP servers into model tools. It owns the MCP
// client side of the gateway: one connection per (session, server), opened
// lazily, initialized once, reused across calls and cycles, re-listed when
// the server announces that its tool list changed, and closed when the
// session goes idle, is archived, or the process shuts down. A cycle whose
// servers announced nothing gets the tools it got before, as they were.
//
// An in-process server's connection is a client session of the pool's own,
// registered on the server: requests go to the server's message handler in
// the wire format, with no MCP client, transport goroutine or initialize
// handshake between them, which each new session would otherwise pay once.
// Every notification the server sends that session makes the next cycle
// list the tools again.
//
// A server is either external (a core.MCPServerSpec named on the agent,
// reached over streamable HTTP, SSE or stdio, authenticated with a vault
// credential resolved through core.CredentialSource) or in process (an
// mcp-go server.MCPServer a provider builds for the session's installation
// and thread). Either way its tools are offered as mcp_<server>_<tool>,
// with their input schemas passed through as the server sent them.
//
// A server that is down never fails a cycle or a session: Pool.Tools skips
// it (still offering the tools it listed before, if any), and a call that
// cannot reach it returns an error result the model sees. Credentials go
// into request headers or a stdio server's environment only; they are
// never logged and are redacted from whatever a server sends back.
//
// The client speaks the stateful MCP protocol (2025-11-25, the last one
// with the initialize handshake): connections are sessions the server can
// count and end, and notifications/tools/list_changed arrives without a
// subscription (on streamable HTTP through the standalone GET stream).
package mcpbridge
