// Package environments serves /v1/environments: what sessions' sandboxes
// are made of (image, packages, variables, network allowlist, vault
// credentials, resources, idle timeout). Every endpoint is admin-only;
// the store validates, and the handler also checks what only the running
// gateway knows: that the image is in the engine and that the credentials
// exist.
//
// The package also resolves the environment of a session's sandbox
// (Sessions).
package environments

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// ImageChecker tells whether an image is in the sandbox engine.
type ImageChecker interface {
	CheckImage(ctx context.Context, ref string) error
}

// CredentialLookup finds vault credentials (core.VaultStore has it).
type CredentialLookup interface {
	GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error)
}

// Handler serves the environment endpoints.
type Handler struct {
	Store core.EnvironmentStore
	// Images, when set, refuses environments whose image the engine lacks.
	Images ImageChecker
	// Credentials, when set, refuses credential ids that do not exist.
	Credentials CredentialLookup
	Logger      *slog.Logger
	// MaxBody bounds request bodies (default 256 KiB).
	MaxBody int64
}

// Register mounts the endpoints on mux. Authentication happens before:
// every request carries a core.Principal.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.MaxBody <= 0 {
		h.MaxBody = 256 << 10
	}
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	handle := web.AdminRoutes(mux, h.Logger)
	handle("POST /v1/environments", h.create)
	handle("GET /v1/environments", h.list)
	handle("GET /v1/environments/{id}", h.get)
	handle("POST /v1/environments/{id}", h.update)
	handle("DELETE /v1/environments/{id}", h.delete)
}

// body is a create or update: fields given replace the stored ones.
type body struct {
	Name               *string             `json:"name"`
	Description        *string             `json:"description"`
	Image              *string             `json:"image"`
	Packages           *core.Packages      `json:"packages"`
	Env                *map[string]string  `json:"env"`
	Network            *core.NetworkPolicy `json:"network"`
	Credentials        *[]string           `json:"credentials"`
	Resources          *core.Resources     `json:"resources"`
	IdleTimeoutSeconds *int                `json:"idle_timeout_seconds"`
	Metadata           *map[string]string  `json:"metadata"`
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func (b *body) apply(e *core.Environment) {
	set(&e.Name, b.Name)
	set(&e.Description, b.Description)
	set(&e.Image, b.Image)
	set(&e.Packages, b.Packages)
	set(&e.Env, b.Env)
	set(&e.Network, b.Network)
	set(&e.Credentials, b.Credentials)
	set(&e.Resources, b.Resources)
	set(&e.IdleTimeoutSeconds, b.IdleTimeoutSeconds)
	set(&e.Metadata, b.Metadata)
}

func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (*body, error) {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return nil, err
	}
	var b body
	if err := web.Decode(raw, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// check validates e, then what the store cannot know.
func (h *Handler) check(ctx context.Context, e *core.Environment) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if h.Images != nil && e.Image != "" {
		if err := h.Images.CheckImage(ctx, e.Image); err != nil {
			return web.Invalid("field \"image\": %v", err)
		}
	}
	if h.Credentials != nil {
		for i, id := range e.Credentials {
			if _, _, err := h.Credentials.GetCredential(ctx, id); err != nil {
				if errors.Is(err, core.ErrNotFound) {
					return web.Invalid("credentials[%d]: no vault credential %q", i, id)
				}
				return err
			}
		}
	}
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	b, err := h.decode(w, r)
	if err != nil {
		return err
	}
	if b.Name == nil || *b.Name == "" {
		return web.Invalid("field \"name\" is required")
	}
	e := &core.Environment{}
	b.apply(e)
	if err := h.check(r.Context(), e); err != nil {
		return err
	}
	e, err = h.Store.CreateEnvironment(r.Context(), e)
	if err != nil {
		return err
	}
	h.Logger.Info("environment created", "environment_id", e.ID)
	web.WriteJSON(w, http.StatusCreated, e)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	return web.List(w, r, h.Store.ListEnvironments)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	e, err := h.Store.GetEnvironment(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "environment", id)
	}
	web.WriteJSON(w, http.StatusOK, e)
	return nil
}

// update replaces the fields given. Sessions see the change at their
// sandbox's next start (a running one keeps its definition until it
// hibernates); a change of image or packages builds a new prepared image.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	b, err := h.decode(w, r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	// Checked on a copy first: the engine and the vault are not asked from
	// inside the store's write transaction.
	cur, err := h.Store.GetEnvironment(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "environment", id)
	}
	b.apply(cur)
	if err := h.check(r.Context(), cur); err != nil {
		return err
	}
	e, err := h.Store.UpdateEnvironment(r.Context(), id, func(e *core.Environment) error {
		b.apply(e)
		return nil
	})
	if err != nil {
		return web.NotFound(err, "environment", id)
	}
	h.Logger.Info("environment updated", "environment_id", e.ID)
	web.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.Store.DeleteEnvironment(r.Context(), id); err != nil {
		return web.NotFound(err, "environment", id)
	}
	h.Logger.Info("environment deleted", "environment_id", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
