package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
	"github.com/switchboardhq/switchboard/sessions/memory"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// memoryServer serves /v1/memory_stores over stores, with "admin" as
// the admin token.
func memoryServer(t *testing.T, stores core.MemoryStores) *client.Client {
	t.Helper()
	mux := http.NewServeMux()
	(&memory.Handler{Stores: stores}).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer admin" {
			r = r.WithContext(core.WithPrincipal(r.Context(), core.Principal{Admin: true}))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return client.New(srv.URL, "admin", nil)
}

func TestMemory(t *testing.T) {
	stores := &fakememory.Stores{}
	c := memoryServer(t, stores)
	ctx := t.Context()
	name, shared, desc := "notes", false, "what we learned"
	m, err := c.CreateMemoryStore(ctx, client.MemoryStoreParams{Name: &name, Shared: &shared, Description: &desc, Limits: &core.MemoryLimits{MaxVersions: 3}})
	if err != nil || m.Name != "notes" || m.Description != desc || m.Limits.MaxVersions != 3 {
		t.Fatalf("create: %+v, %v", m, err)
	}
	if got, err := c.GetMemoryStore(ctx, "notes"); err != nil || got.ID != m.ID {
		t.Fatalf("get: %+v, %v", got, err)
	}
	desc2 := "renamed"
	if got, err := c.UpdateMemoryStore(ctx, m.ID, client.MemoryStoreParams{Description: &desc2}); err != nil || got.Description != desc2 || got.Limits.MaxVersions != 3 {
		t.Fatalf("update: %+v, %v", got, err)
	}
	if page, err := c.ListMemoryStores(ctx, client.ListParams{Limit: 10}); err != nil || len(page.Data) != 1 || page.Data[0].ID != m.ID {
		t.Fatalf("list: %+v, %v", page, err)
	}

	// A path with a space and a segment that needs escaping.
	const path = "people/ann marie%.md"
	for _, content := range []string{"v1", "v2"} {
		if _, err := stores.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: path, Content: content, SessionID: "ses_1"}); err != nil {
			t.Fatal(err)
		}
	}
	if tenants, err := c.MemoryTenants(ctx, "notes"); err != nil || len(tenants) != 1 || tenants[0] != "slack:T1" {
		t.Fatalf("tenants: %v, %v", tenants, err)
	}
	if files, err := c.MemoryFiles(ctx, "notes", "slack:T1"); err != nil || len(files) != 1 || files[0].Path != path {
		t.Fatalf("files: %+v, %v", files, err)
	}
	if v, err := c.MemoryFile(ctx, "notes", "slack:T1", path, 1); err != nil || v.Content != "v1" {
		t.Fatalf("file version 1: %+v, %v", v, err)
	}
	if v, err := c.MemoryFile(ctx, "notes", "slack:T1", path, 0); err != nil || v.Content != "v2" {
		t.Fatalf("latest file: %+v, %v", v, err)
	}
	if h, err := c.MemoryHistory(ctx, "notes", "slack:T1", path); err != nil || len(h) != 2 || h[0].Version != 2 || h[0].SessionID != "ses_1" {
		t.Fatalf("history: %+v, %v", h, err)
	}
	v, err := c.RevertMemory(ctx, "notes", client.MemoryRevert{Tenant: "slack:T1", Path: path, Version: 1})
	if err != nil || v.Version != 3 || v.By != "admin" {
		t.Fatalf("revert: %+v, %v", v, err)
	}
	_, err = c.MemoryFiles(ctx, "notes", "")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("files without a tenant: %v", err)
	}
	if err := c.DeleteMemoryStore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetMemoryStore(ctx, m.ID); !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Fatalf("get after delete: %v", err)
	}
}
