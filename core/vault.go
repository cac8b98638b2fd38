package core

import "context"

// Vault is a named set of credentials. Agents and sessions reference
// credentials by id; the values never leave the gateway.
type Vault struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	CreatedAt   Time              `json:"created_at"`
	UpdatedAt   Time              `json:"updated_at"`
}

// CredentialKind is how a credential authenticates.
type CredentialKind string

const (
	// CredentialStaticBearer is sent as "Authorization: Bearer <token>".
	CredentialStaticBearer CredentialKind = "static_bearer"
	// CredentialHeader is sent as "<HeaderName>: <value>".
	CredentialHeader CredentialKind = "header"
	// CredentialOAuth is an access token refreshed at TokenURL with a
	// refresh token, sent as a bearer token.
	CredentialOAuth CredentialKind = "oauth"
)

// Credential is a vault item's metadata: what the API shows. Its secret is
// stored sealed (see CredentialSecret) and is never returned.
type Credential struct {
	ID         string         `json:"id"`
	VaultID    string         `json:"vault_id"`
	Name       string         `json:"name"`
	Kind       CredentialKind `json:"kind"`
	Hosts      []string       `json:"hosts"` // where it may be sent (host or host:port; "*.example.com" for subdomains)
	HeaderName string         `json:"header_name,omitempty"`
	TokenURL   string         `json:"token_url,omitempty"`
	ClientID   string         `json:"client_id,omitempty"`
	Scopes     []string       `json:"scopes,omitempty"`
	// ExpiresAt is when an oauth access token expires.
	ExpiresAt *Time `json:"expires_at,omitempty"`
	CreatedAt Time  `json:"created_at"`
	UpdatedAt Time  `json:"updated_at"`
	// Scope is who owns the credential, which sessions may use it: global
	// (the default, and every credential stored before scopes), a tenant
	// or a tenant group. Last, so a record of an earlier release gains it
	// where the encoder writes it (see the stores' migrations).
	Scope CredentialScope `json:"scope"`
}

// CredentialSecret is the sealed part of a credential.
type CredentialSecret struct {
	Token        string `json:"token,omitempty"`         // static_bearer
	Value        string `json:"value,omitempty"`         // header
	AccessToken  string `json:"access_token,omitempty"`  // oauth
	RefreshToken string `json:"refresh_token,omitempty"` // oauth
	ClientSecret string `json:"client_secret,omitempty"` // oauth
}

// Sealer encrypts secrets at rest with the master key; aad binds a sealed
// value to where it is stored, so it cannot be moved to another record.
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// VaultStore keeps vaults and sealed credentials.
type VaultStore interface {
	CreateVault(ctx context.Context, v *Vault) (*Vault, error)
	GetVault(ctx context.Context, id string) (*Vault, error)
	ListVaults(ctx context.Context, after string, limit int) ([]*Vault, bool, error)
	// DeleteVault deletes the vault and its credentials.
	DeleteVault(ctx context.Context, id string) error
	// PutCredential creates or replaces a credential (by ID) with its
	// sealed secret.
	PutCredential(ctx context.Context, c *Credential, sealed []byte) (*Credential, error)
	// GetCredential finds a credential by id alone (ids are unique).
	GetCredential(ctx context.Context, id string) (*Credential, []byte, error)
	ListCredentials(ctx context.Context, vaultID string) ([]*Credential, error)
	DeleteCredential(ctx context.Context, vaultID, id string) error
}

// ID prefixes of vaults and credentials.
const (
	PrefixVault      = "vlt"
	PrefixCredential = "vcr"
)

// CredentialSource resolves vault credentials for outbound requests made
// on the model's behalf (MCP servers, the sandbox's egress proxy). The
// values it returns must never be logged or put into an event.
// Callers name the session a credential is used for with
// WithCredentialSession: a credential scoped to a tenant or tenant group
// resolves only for a session of its owner (else a *ScopeError).
type CredentialSource interface {
	// Header returns the header carrying credential id for a request to
	// host (host or host:port), refreshing an expired oauth token first. A
	// credential not bound to host fails with ErrForbidden.
	Header(ctx context.Context, id, host string) (name, value string, err error)
	// Token returns the credential's bare secret (the bearer token or the
	// header value), for a stdio server's environment.
	Token(ctx context.Context, id string) (string, error)
	// Refresh renews an oauth credential the server refused (a 401); other
	// kinds cannot be renewed and return an error.
	Refresh(ctx context.Context, id string) error
}
