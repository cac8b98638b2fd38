package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// VaultParams is the body that creates a vault.
type VaultParams struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// CredentialParams is the body of credential create and rotate. Pointers
// tell given from absent: a rotate replaces only the given fields. The
// secret fields (Token, Value, AccessToken, RefreshToken, ClientSecret)
// are write-only: no answer carries them back.
type CredentialParams struct {
	Name  *string              `json:"name,omitempty"`
	Kind  *core.CredentialKind `json:"kind,omitempty"`
	Hosts *[]string            `json:"hosts,omitempty"`
	// Scope is the credential's owner; none on create makes it global.
	Scope *core.CredentialScope `json:"scope,omitempty"`
	// static_bearer
	Token *string `json:"token,omitempty"`
	// header
	HeaderName *string `json:"header_name,omitempty"`
	Value      *string `json:"value,omitempty"`
	// oauth
	AccessToken  *string   `json:"access_token,omitempty"`
	RefreshToken *string   `json:"refresh_token,omitempty"`
	TokenURL     *string   `json:"token_url,omitempty"`
	ClientID     *string   `json:"client_id,omitempty"`
	ClientSecret *string   `json:"client_secret,omitempty"`
	Scopes       *[]string `json:"scopes,omitempty"`
	// ExpiresAt is the access token's expiry, an RFC 3339 time.
	ExpiresAt *string `json:"expires_at,omitempty"`
}

// CreateVault creates a vault.
func (c *Client) CreateVault(ctx context.Context, p VaultParams) (*core.Vault, error) {
	var v core.Vault
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/vaults", body: p}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ListVaults returns one page of vaults.
func (c *Client) ListVaults(ctx context.Context, p ListParams) (*web.Page[core.Vault], error) {
	var page web.Page[core.Vault]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/vaults", query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetVault returns the vault with this id.
func (c *Client) GetVault(ctx context.Context, id string) (*core.Vault, error) {
	var v core.Vault
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/vaults/%s", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// DeleteVault deletes the vault and its credentials.
func (c *Client) DeleteVault(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/vaults/%s", id)}, nil)
}

// CreateCredential adds a credential to a vault; the answer is its
// metadata.
func (c *Client) CreateCredential(ctx context.Context, vaultID string, p CredentialParams) (*core.Credential, error) {
	var out core.Credential
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/vaults/%s/credentials", vaultID), body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListCredentials returns one page of a vault's credentials.
func (c *Client) ListCredentials(ctx context.Context, vaultID string, p ListParams) (*web.Page[core.Credential], error) {
	var page web.Page[core.Credential]
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/vaults/%s/credentials", vaultID), query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetCredential returns a credential's metadata.
func (c *Client) GetCredential(ctx context.Context, vaultID, id string) (*core.Credential, error) {
	var out core.Credential
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/vaults/%s/credentials/%s", vaultID, id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateCredential replaces the given fields of a credential (a new
// value, say); its kind cannot change.
func (c *Client) RotateCredential(ctx context.Context, vaultID, id string, p CredentialParams) (*core.Credential, error) {
	var out core.Credential
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/vaults/%s/credentials/%s", vaultID, id), body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteCredential deletes a credential of a vault.
func (c *Client) DeleteCredential(ctx context.Context, vaultID, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/vaults/%s/credentials/%s", vaultID, id)}, nil)
}
