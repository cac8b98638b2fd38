package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

// The memory store bodies are the server's own.
type (
	MemoryStoreParams = memory.StoreParams
	MemoryRevert      = memory.RevertBody
)

// CreateMemoryStore creates a memory store.
func (c *Client) CreateMemoryStore(ctx context.Context, p MemoryStoreParams) (*core.MemoryStore, error) {
	var m core.MemoryStore
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/memory_stores", body: p}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ListMemoryStores returns one page of memory stores.
func (c *Client) ListMemoryStores(ctx context.Context, p ListParams) (*web.Page[core.MemoryStore], error) {
	var page web.Page[core.MemoryStore]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/memory_stores", query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetMemoryStore returns the memory store with this id or name.
func (c *Client) GetMemoryStore(ctx context.Context, id string) (*core.MemoryStore, error) {
	var m core.MemoryStore
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/memory_stores/%s", id)}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// UpdateMemoryStore changes the given fields of p.
func (c *Client) UpdateMemoryStore(ctx context.Context, id string, p MemoryStoreParams) (*core.MemoryStore, error) {
	var m core.MemoryStore
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/memory_stores/%s", id), body: p}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// DeleteMemoryStore deletes the store and its files.
func (c *Client) DeleteMemoryStore(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/memory_stores/%s", id)}, nil)
}

// MemoryTenants lists the tenants that hold files of the store.
func (c *Client) MemoryTenants(ctx context.Context, store string) ([]string, error) {
	var page web.Page[string]
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/memory_stores/%s/tenants", store)}, &page); err != nil {
		return nil, err
	}
	return page.Data, nil
}

// MemoryFiles lists the latest versions of a tenant's files ("" for a
// shared store's), without content.
func (c *Client) MemoryFiles(ctx context.Context, store, tenant string) ([]core.MemoryVersion, error) {
	var page web.Page[core.MemoryVersion]
	rq := request{method: http.MethodGet, path: pathf("/v1/memory_stores/%s/files", store), query: tenantQuery(tenant)}
	if err := c.do(ctx, rq, &page); err != nil {
		return nil, err
	}
	return page.Data, nil
}

// MemoryFile returns a version of a file with its content (0: the
// latest).
func (c *Client) MemoryFile(ctx context.Context, store, tenant, path string, version int) (*core.MemoryVersion, error) {
	q := tenantQuery(tenant)
	if version > 0 {
		q.Set("version", strconv.Itoa(version))
	}
	var v core.MemoryVersion
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/memory_stores/%s/files/", store) + escapePath(path), query: q}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// MemoryHistory lists a file's retained versions, newest first.
func (c *Client) MemoryHistory(ctx context.Context, store, tenant, path string) ([]core.MemoryVersion, error) {
	var page web.Page[core.MemoryVersion]
	rq := request{method: http.MethodGet, path: pathf("/v1/memory_stores/%s/history/", store) + escapePath(path), query: tenantQuery(tenant)}
	if err := c.do(ctx, rq, &page); err != nil {
		return nil, err
	}
	return page.Data, nil
}

// RevertMemory writes an earlier version's content as the file's latest
// and returns the version written.
func (c *Client) RevertMemory(ctx context.Context, store string, b MemoryRevert) (*core.MemoryVersion, error) {
	var v core.MemoryVersion
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/memory_stores/%s/revert", store), body: b}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func tenantQuery(tenant string) url.Values {
	q := url.Values{}
	if tenant != "" {
		q.Set("tenant", tenant)
	}
	return q
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
