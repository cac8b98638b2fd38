package github

import (
	"container/list"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// maxToolServers is how many sessions' tool servers are kept; one
// dropped is rebuilt at its session's next cycle.
const maxToolServers = 1000

// toolCache keeps the sessions' MCP servers, least recently used out.
// The zero value is ready.
type toolCache struct {
	mu    sync.Mutex
	order *list.List // of *toolEntry, most recent first
	byID  map[string]*list.Element
}

type toolEntry struct {
	session      string
	installation int64
	srv          *server.MCPServer
}

// get returns the session's server, building it when there is none or
// when the session's installation changed.
func (c *toolCache) get(session string, installation int64, build func() *server.MCPServer) *server.MCPServer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		c.order, c.byID = list.New(), map[string]*list.Element{}
	}
	if el, ok := c.byID[session]; ok {
		e := el.Value.(*toolEntry)
		if e.installation == installation {
			c.order.MoveToFront(el)
			return e.srv
		}
		c.order.Remove(el)
		delete(c.byID, session)
	}
	e := &toolEntry{session: session, installation: installation, srv: build()}
	c.byID[session] = c.order.PushFront(e)
	for c.order.Len() > maxToolServers {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byID, oldest.Value.(*toolEntry).session)
	}
	return e.srv
}

// forgetInstallation drops the servers of an uninstalled installation.
func (c *toolCache) forgetInstallation(installation int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		return
	}
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*toolEntry); e.installation == installation {
			c.order.Remove(el)
			delete(c.byID, e.session)
		}
		el = next
	}
}
