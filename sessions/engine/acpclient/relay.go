package acpclient

import (
	"context"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// relayPath is where the MCP relay is put in a sandbox whose agent takes
// MCP servers over stdio only: /tmp, gone with the container as the
// agent that runs it is.
const relayPath = "/tmp/.switchboard/mcp-relay.js"

// relayScript relays MCP over stdio to the gateway's MCP endpoint, one
// JSON-RPC message a line each way, through the egress proxy the
// sandbox's environment names (HTTP_PROXY): the agent starts it as a
// stdio MCP server, with Node, which the agents that need it (npm
// packages) run on. It holds no credential: the proxy knows the session
// by the sandbox's address.
const relayScript = `'use strict';
const http = require('http');
const target = new URL(process.argv[2]);
const proxy = process.env.HTTP_PROXY || process.env.http_proxy;
const via = proxy ? new URL(proxy) : target;
const queue = [];
let busy = false, buffered = '';
function out(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }
function fail(msg, err) {
  if (msg && msg.id !== undefined) out({jsonrpc: '2.0', id: msg.id, error: {code: -32603, message: 'switchboard relay: ' + err}});
}
function next() {
  if (busy || queue.length === 0) return;
  busy = true;
  const line = queue.shift();
  let msg;
  try { msg = JSON.parse(line); } catch (e) { busy = false; return next(); }
  const body = Buffer.from(line);
  const req = http.request({host: via.hostname, port: via.port || 80, method: 'POST', path: proxy ? target.href : target.pathname,
    headers: {'Host': target.host, 'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream', 'Content-Length': body.length}}, (res) => {
    let data = '';
    res.setEncoding('utf8');
    res.on('data', (c) => { data += c; });
    res.on('end', () => {
      if (res.statusCode >= 400) fail(msg, 'HTTP ' + res.statusCode + ' ' + data.trim());
      else if ((res.headers['content-type'] || '').includes('text/event-stream')) {
        for (const l of data.split(/\r?\n/)) if (l.startsWith('data:')) { const d = l.slice(5).trim(); if (d) process.stdout.write(d + '\n'); }
      } else if (data.trim()) process.stdout.write(data.trim() + '\n');
      busy = false; next();
    });
  });
  req.on('error', (e) => { fail(msg, e.message); busy = false; next(); });
  req.end(body);
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buffered += c;
  let i;
  while ((i = buffered.indexOf('\n')) >= 0) { const l = buffered.slice(0, i).trim(); buffered = buffered.slice(i + 1); if (l) queue.push(l); }
  next();
});
process.stdin.on('end', () => { const check = () => (busy || queue.length) ? setTimeout(check, 10) : process.exit(0); check(); });
`

// putRelay writes the relay into the session's sandbox.
func (h *Harness) putRelay(ctx context.Context, sessionID string) error {
	res, err := h.Sandbox.Exec(ctx, sessionID, core.ExecRequest{
		Cmd: []string{`mkdir -p "$(dirname "$1")" && cat > "$1"`, relayPath}, Shell: true, Stdin: []byte(relayScript)})
	switch {
	case err != nil:
		return err
	case res.ExitCode != 0:
		return fmt.Errorf("%s", strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// stdioServer is the gateway's MCP server for an agent that takes MCP
// over stdio only: the relay, run with Node.
func stdioServer() acp.McpServer {
	return acp.McpServer{Stdio: &acp.McpServerStdio{Name: mcpServerName, Command: "node", Args: []string{relayPath, mcpURL}, Env: []acp.EnvVariable{}}}
}
