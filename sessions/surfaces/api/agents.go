package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// agentBody is the create and update body; pointers tell given from absent.
type agentBody struct {
	Name        *string               `json:"name"`
	Model       *string               `json:"model"`
	System      *string               `json:"system"`
	Description *string               `json:"description"`
	Tools       *[]core.ToolSpec      `json:"tools"`
	MCPServers  *[]core.MCPServerSpec `json:"mcp_servers"`
	// Skills and MemoryStores replace the latest version's when given;
	// a skill without a version pins its latest at this save.
	Skills       *[]core.SkillRef       `json:"skills"`
	MemoryStores *[]core.MemoryStoreRef `json:"memory_stores"`
	Limits       *core.Limits           `json:"limits"`
	Environment  *string                `json:"environment"`
	Runtime      *core.AgentRuntime     `json:"runtime"`
	Metadata     *map[string]string     `json:"metadata"`
	// RepositoryAccess replaces the latest version's when given; null
	// takes it away.
	RepositoryAccess optionalAccess `json:"repository_access"`
	Version          *int           `json:"version"` // update only
}

// optionalAccess is a repository_access given (an object, or null for
// none) or absent.
type optionalAccess struct {
	given bool
	v     *core.RepositoryAccess
}

func (o *optionalAccess) UnmarshalJSON(b []byte) error {
	o.given, o.v = true, nil
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	o.v = new(core.RepositoryAccess)
	if err := dec.Decode(o.v); err != nil {
		return fmt.Errorf("field \"repository_access\": %w", err)
	}
	return nil
}

// apply writes the given fields onto a.
func (b *agentBody) apply(a *core.Agent) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.Name, b.Name)
	set(&a.Model, b.Model)
	set(&a.System, b.System)
	set(&a.Description, b.Description)
	set(&a.Environment, b.Environment)
	if b.Tools != nil {
		a.Tools = *b.Tools
	}
	if b.MCPServers != nil {
		a.MCPServers = *b.MCPServers
	}
	if b.Skills != nil {
		a.Skills = *b.Skills
	}
	if b.MemoryStores != nil {
		a.MemoryStores = *b.MemoryStores
	}
	if b.Limits != nil {
		a.Limits = *b.Limits
	}
	if b.Metadata != nil {
		a.Metadata = *b.Metadata
	}
	if b.Runtime != nil {
		a.Runtime = *b.Runtime
	}
	if b.RepositoryAccess.given {
		a.RepositoryAccess = b.RepositoryAccess.v
	}
}

func (h *Handler) decodeAgent(w http.ResponseWriter, r *http.Request) (*agentBody, error) {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return nil, err
	}
	var b agentBody
	if err := web.Decode(raw, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

func (h *Handler) createAgent(w http.ResponseWriter, r *http.Request) error {
	b, err := h.decodeAgent(w, r)
	if err != nil {
		return err
	}
	if b.Version != nil {
		return web.Invalid("unknown field \"version\": a new agent starts at version 1")
	}
	if b.Name == nil || *b.Name == "" {
		return web.Invalid("field \"name\" is required")
	}
	acp := b.Runtime != nil && b.Runtime.Kind == core.RuntimeACP
	if (b.Model == nil || *b.Model == "") && !acp {
		return web.Invalid("field \"model\" is required (anthropic/<model> or openai/<model>)")
	}
	a := &core.Agent{}
	b.apply(a)
	if err := a.Validate(); err != nil {
		return err
	}
	if err := h.checkRuntime(r.Context(), a); err != nil {
		return err
	}
	if err := h.StdioAllow.Check(a.MCPServers); err != nil {
		return err
	}
	if err := h.checkEnvironment(r.Context(), a.Environment); err != nil {
		return err
	}
	if err := h.checkRepositoryAccess(r.Context(), a.RepositoryAccess); err != nil {
		return err
	}
	a, err = h.Store.CreateAgent(r.Context(), a)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, a)
	return nil
}

func (h *Handler) updateAgent(w http.ResponseWriter, r *http.Request) error {
	b, err := h.decodeAgent(w, r)
	if err != nil {
		return err
	}
	expect := 0
	if b.Version != nil {
		if *b.Version < 1 {
			return web.Invalid("field \"version\" must be ≥ 1")
		}
		expect = *b.Version
	}
	// Looked up outside the store's write transaction; an environment the
	// agent already names is left alone.
	if b.Environment != nil {
		if cur, err := h.Store.GetAgent(r.Context(), r.PathValue("id")); err == nil && cur.Environment != *b.Environment {
			if err := h.checkEnvironment(r.Context(), *b.Environment); err != nil {
				return err
			}
		}
	}
	if b.Model != nil || b.Runtime != nil {
		// Checked on what the update makes, outside the store's write
		// transaction; the store validates it again inside.
		next := core.Agent{}
		if cur, err := h.Store.GetAgent(r.Context(), r.PathValue("id")); err == nil {
			next = *cur
		}
		b.apply(&next)
		if next.Runtime.Validate() == nil {
			if _, _, err := core.SplitModel(next.Model); err == nil || next.Runtime.Kind == core.RuntimeACP {
				if err := h.checkRuntime(r.Context(), &next); err != nil {
					return err
				}
			}
		}
	}
	if b.RepositoryAccess.given {
		// Checked before the write, as the environment is: the access must
		// be valid in shape first.
		if err := b.RepositoryAccess.v.Validate(); err != nil {
			return err
		}
		if err := h.checkRepositoryAccess(r.Context(), b.RepositoryAccess.v); err != nil {
			return err
		}
	}
	a, err := h.Store.UpdateAgent(r.Context(), r.PathValue("id"), expect, func(a *core.Agent) error {
		prev := a.Name
		b.apply(a)
		if err := a.ValidateUpdate(prev); err != nil {
			return err
		}
		// An update that leaves mcp_servers alone is not refused for a
		// server stored before the allowlist: the bridge will not start it.
		if b.MCPServers == nil {
			return nil
		}
		return h.StdioAllow.Check(a.MCPServers)
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) getAgent(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var a *core.Agent
	var err error
	if v := r.URL.Query().Get("version"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 {
			return web.Invalid("version=%q: want a whole number ≥ 1", v)
		}
		a, err = h.Store.GetAgent(r.Context(), id)
		if err == nil {
			a, err = h.Store.GetAgentVersion(r.Context(), a.ID, n)
		}
	} else {
		a, err = h.Store.GetAgent(r.Context(), id)
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) error {
	return web.List(w, r, h.Store.ListAgents)
}

// agentRef is the session body's agent: an id or name, or {id, version}.
type agentRef struct {
	ID      string
	Version int
}

func (a *agentRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		a.ID = s
		return nil
	}
	var obj struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	if err := strictUnmarshal(b, &obj); err != nil {
		return err
	}
	a.ID, a.Version = obj.ID, obj.Version
	return nil
}
