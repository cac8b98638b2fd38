package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// AgentParams is the body of agent create and update. Pointers tell given
// from absent: on update only the given fields replace those of the
// latest version.
type AgentParams struct {
	Name        *string               `json:"name,omitempty"`
	Model       *string               `json:"model,omitempty"`
	System      *string               `json:"system,omitempty"`
	Description *string               `json:"description,omitempty"`
	Tools       *[]core.ToolSpec      `json:"tools,omitempty"`
	MCPServers  *[]core.MCPServerSpec `json:"mcp_servers,omitempty"`
	// Skills and MemoryStores replace the latest version's when given.
	Skills       *[]core.SkillRef       `json:"skills,omitempty"`
	MemoryStores *[]core.MemoryStoreRef `json:"memory_stores,omitempty"`
	Limits       *core.Limits           `json:"limits,omitempty"`
	Environment  *string                `json:"environment,omitempty"`
	Runtime      *core.AgentRuntime     `json:"runtime,omitempty"`
	Metadata     *map[string]string     `json:"metadata,omitempty"`
	// RepositoryAccess replaces the latest version's when given.
	RepositoryAccess *core.RepositoryAccess `json:"repository_access,omitempty"`
	// Version, on update, must equal the latest version, else the server
	// answers 409 conflict.
	Version *int `json:"version,omitempty"`
}

// ListParams pages a list: after an id, at most Limit items (0: the
// server's default of 100).
type ListParams struct {
	After string
	Limit int
}

func (p ListParams) query() url.Values {
	q := url.Values{}
	if p.After != "" {
		q.Set("after", p.After)
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// CreateAgent creates an agent at version 1.
func (c *Client) CreateAgent(ctx context.Context, p AgentParams) (*core.Agent, error) {
	var a core.Agent
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/agents", body: p}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// ListAgents returns one page of agents (their latest versions).
func (c *Client) ListAgents(ctx context.Context, p ListParams) (*web.Page[core.Agent], error) {
	var page web.Page[core.Agent]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/agents", query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetAgent returns the latest version of the agent with this id (or name).
func (c *Client) GetAgent(ctx context.Context, id string) (*core.Agent, error) {
	var a core.Agent
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/agents/%s", id)}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// UpdateAgent writes version N+1 from the latest version and the given
// fields of p.
func (c *Client) UpdateAgent(ctx context.Context, id string, p AgentParams) (*core.Agent, error) {
	var a core.Agent
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/agents/%s", id), body: p}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}
