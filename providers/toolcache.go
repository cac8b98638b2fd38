package providers

import (
	"container/list"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// DefaultToolServers is how many sessions' tool servers a ToolCache keeps
// unless told otherwise; one dropped is rebuilt at its session's next
// cycle.
const DefaultToolServers = 1000

// ToolCache keeps the MCP servers a ToolServer built for sessions, least
// recently used out, so that the same session gets the same server (the
// MCP bridge reconnects when the pointer changes). K is what the server
// was built for (the installation, what it offers): a session whose K
// changed gets a new one. The zero value is ready.
type ToolCache[K comparable] struct {
	// Max is how many servers are kept (default DefaultToolServers).
	Max int

	mu    sync.Mutex
	order *list.List // of *toolEntry[K], most recent first
	byID  map[string]*list.Element
}

type toolEntry[K comparable] struct {
	session string
	key     K
	srv     *server.MCPServer
}

// Get returns the session's server for key, building it when there is
// none or when it was built for another key.
func (c *ToolCache[K]) Get(session string, key K, build func() *server.MCPServer) *server.MCPServer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		c.order, c.byID = list.New(), map[string]*list.Element{}
	}
	if el, ok := c.byID[session]; ok {
		e := el.Value.(*toolEntry[K])
		if e.key == key {
			c.order.MoveToFront(el)
			return e.srv
		}
		c.order.Remove(el)
		delete(c.byID, session)
	}
	e := &toolEntry[K]{session: session, key: key, srv: build()}
	c.byID[session] = c.order.PushFront(e)
	max := c.Max
	if max <= 0 {
		max = DefaultToolServers
	}
	for c.order.Len() > max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byID, oldest.Value.(*toolEntry[K]).session)
	}
	return e.srv
}

// Forget drops the servers whose key matches (an uninstalled
// installation's).
func (c *ToolCache[K]) Forget(match func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		return
	}
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*toolEntry[K]); match(e.key) {
			c.order.Remove(el)
			delete(c.byID, e.session)
		}
		el = next
	}
}
