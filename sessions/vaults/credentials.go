package vaults

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// credentialBody is the create and rotate body; pointers tell given from
// absent. The secret fields are write-only: no answer ever echoes them.
type credentialBody struct {
	Name  *string              `json:"name"`
	Kind  *core.CredentialKind `json:"kind"`
	Hosts *[]string            `json:"hosts"`
	// Scope is the credential's owner (absent on create: global).
	Scope *core.CredentialScope `json:"scope"`
	// static_bearer
	Token *string `json:"token"`
	// header
	HeaderName *string `json:"header_name"`
	Value      *string `json:"value"`
	// oauth
	AccessToken  *string    `json:"access_token"`
	RefreshToken *string    `json:"refresh_token"`
	TokenURL     *string    `json:"token_url"`
	ClientID     *string    `json:"client_id"`
	ClientSecret *string    `json:"client_secret"`
	Scopes       *[]string  `json:"scopes"`
	ExpiresAt    *expiresAt `json:"expires_at"`
}

// expiresAt is a core.Time whose decoding errors name the field, which
// core.Time's cannot know.
type expiresAt struct{ core.Time }

func (e *expiresAt) UnmarshalJSON(b []byte) error {
	if err := e.Time.UnmarshalJSON(b); err != nil {
		return errors.New(`field "expires_at": want an RFC 3339 time such as "2030-01-02T15:04:05Z"`)
	}
	return nil
}

// kindField is a body field that only one kind uses.
type kindField struct {
	name  string
	given bool
	kind  core.CredentialKind
}

func (b *credentialBody) kindFields() []kindField {
	return []kindField{
		{"token", b.Token != nil, core.CredentialStaticBearer},
		{"header_name", b.HeaderName != nil, core.CredentialHeader},
		{"value", b.Value != nil, core.CredentialHeader},
		{"access_token", b.AccessToken != nil, core.CredentialOAuth},
		{"refresh_token", b.RefreshToken != nil, core.CredentialOAuth},
		{"token_url", b.TokenURL != nil, core.CredentialOAuth},
		{"client_id", b.ClientID != nil, core.CredentialOAuth},
		{"client_secret", b.ClientSecret != nil, core.CredentialOAuth},
		{"scopes", b.Scopes != nil, core.CredentialOAuth},
		{"expires_at", b.ExpiresAt != nil, core.CredentialOAuth},
	}
}

// given names the fields present, for the log (names, never values).
func (b *credentialBody) given() []string {
	var out []string
	if b.Name != nil {
		out = append(out, "name")
	}
	if b.Hosts != nil {
		out = append(out, "hosts")
	}
	if b.Scope != nil {
		out = append(out, "scope")
	}
	for _, f := range b.kindFields() {
		if f.given {
			out = append(out, f.name)
		}
	}
	return out
}

// apply validates the given fields and writes them onto c and sec.
func (b *credentialBody) apply(c *core.Credential, sec *core.CredentialSecret) error {
	for _, f := range b.kindFields() {
		if f.given && f.kind != c.Kind {
			return web.Invalid("field %q is not used by kind %q (it belongs to kind %q)", f.name, c.Kind, f.kind)
		}
	}
	if b.Name != nil {
		if err := checkName("name", *b.Name); err != nil {
			return err
		}
		c.Name = *b.Name
	}
	if b.Hosts != nil {
		hosts, err := checkHosts(*b.Hosts)
		if err != nil {
			return err
		}
		c.Hosts = hosts
	}
	if b.Scope != nil {
		if err := b.Scope.Validate(); err != nil {
			return err
		}
		c.Scope = b.Scope.Normal()
	}
	for _, s := range []struct {
		field string
		src   *string
		dst   *string
	}{
		{"token", b.Token, &sec.Token},
		{"value", b.Value, &sec.Value},
		{"access_token", b.AccessToken, &sec.AccessToken},
		{"refresh_token", b.RefreshToken, &sec.RefreshToken},
		{"client_secret", b.ClientSecret, &sec.ClientSecret},
		{"client_id", b.ClientID, &c.ClientID},
	} {
		if s.src == nil {
			continue
		}
		if err := checkSecret(s.field, *s.src); err != nil {
			return err
		}
		*s.dst = *s.src
	}
	if b.HeaderName != nil {
		name, err := checkHeaderName(*b.HeaderName)
		if err != nil {
			return err
		}
		c.HeaderName = name
	}
	if b.TokenURL != nil {
		if err := checkTokenURL(*b.TokenURL); err != nil {
			return err
		}
		c.TokenURL = *b.TokenURL
	}
	if b.Scopes != nil {
		if err := checkScopes(*b.Scopes); err != nil {
			return err
		}
		c.Scopes = *b.Scopes
	}
	// A new access token comes with its own expiry or none (then it is
	// used until a server refuses it); the old token's never carries over.
	if b.AccessToken != nil || b.ExpiresAt != nil {
		c.ExpiresAt = nil
		if b.ExpiresAt != nil {
			c.ExpiresAt = b.ExpiresAt.Ptr()
		}
	}
	return nil
}

// complete checks that c and sec hold everything their kind needs.
func complete(c *core.Credential, sec *core.CredentialSecret) error {
	if c.Name == "" {
		return web.Invalid("field \"name\" is required")
	}
	if len(c.Hosts) == 0 {
		return web.Invalid("field \"hosts\" is required: the hosts the credential may be sent to")
	}
	need := func(field, v string) error {
		if v == "" {
			return web.Invalid("field %q is required for kind %q", field, c.Kind)
		}
		return nil
	}
	var err error
	switch c.Kind {
	case core.CredentialStaticBearer:
		err = need("token", sec.Token)
	case core.CredentialHeader:
		if err = need("header_name", c.HeaderName); err == nil {
			err = need("value", sec.Value)
		}
	case core.CredentialOAuth:
		for _, f := range [][2]string{{"refresh_token", sec.RefreshToken}, {"token_url", c.TokenURL}, {"client_id", c.ClientID}} {
			if err = need(f[0], f[1]); err != nil {
				break
			}
		}
		if err == nil && c.ExpiresAt != nil && sec.AccessToken == "" {
			err = web.Invalid("field \"expires_at\" is the expiry of \"access_token\", which is not given")
		}
	}
	return err
}

func checkKind(k core.CredentialKind) error {
	switch k {
	case core.CredentialStaticBearer, core.CredentialHeader, core.CredentialOAuth:
		return nil
	}
	return web.Invalid("field \"kind\": unknown kind %q: want static_bearer, header or oauth", k)
}

func (h *Handler) decodeCredential(w http.ResponseWriter, r *http.Request) (*credentialBody, error) {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return nil, err
	}
	var b credentialBody
	if err := web.Decode(raw, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// save seals sec to the credential's id and stores both.
func (h *Handler) save(r *http.Request, c *core.Credential, sec *core.CredentialSecret) (*core.Credential, error) {
	sealed, err := sealSecret(h.Sealer, c.ID, sec)
	if err != nil {
		return nil, err
	}
	return h.Store.PutCredential(r.Context(), c, sealed)
}

func (h *Handler) createCredential(w http.ResponseWriter, r *http.Request) error {
	vaultID := r.PathValue("id")
	b, err := h.decodeCredential(w, r)
	if err != nil {
		return err
	}
	if _, err := h.Store.GetVault(r.Context(), vaultID); err != nil {
		return web.NotFound(err, "vault", vaultID)
	}
	if b.Kind == nil {
		return web.Invalid("field \"kind\" is required: static_bearer, header or oauth")
	}
	if err := checkKind(*b.Kind); err != nil {
		return err
	}
	// The id is made here, not by the store, because the secret is sealed
	// to it before the store sees either.
	c := &core.Credential{ID: core.NewID(core.PrefixCredential), VaultID: vaultID, Kind: *b.Kind, Scope: core.GlobalScope}
	var sec core.CredentialSecret
	if err := b.apply(c, &sec); err != nil {
		return err
	}
	if err := complete(c, &sec); err != nil {
		return err
	}
	out, err := h.save(r, c, &sec)
	if err != nil {
		return web.NotFound(err, "vault", vaultID)
	}
	h.Logger.Info("credential created", "vault_id", vaultID, "credential_id", out.ID, "kind", string(out.Kind), "scope", out.Scope.String())
	web.WriteJSON(w, http.StatusCreated, out)
	return nil
}

// credential loads the path's credential; one of another vault is not
// found, as if it did not exist.
func (h *Handler) credential(r *http.Request) (*core.Credential, []byte, error) {
	vaultID, id := r.PathValue("id"), r.PathValue("cid")
	c, sealed, err := h.Store.GetCredential(r.Context(), id)
	if err != nil {
		return nil, nil, web.NotFound(err, "credential", id)
	}
	if c.VaultID != vaultID {
		return nil, nil, web.Errorf(http.StatusNotFound, "not_found", "credential %q not found in vault %q", id, vaultID)
	}
	return c, sealed, nil
}

func (h *Handler) rotateCredential(w http.ResponseWriter, r *http.Request) error {
	b, err := h.decodeCredential(w, r)
	if err != nil {
		return err
	}
	c, sealed, err := h.credential(r)
	if err != nil {
		return err
	}
	if b.Kind != nil && *b.Kind != c.Kind {
		return web.Invalid("field \"kind\" cannot change (the credential is %q): create a new credential instead", c.Kind)
	}
	fields := b.given()
	if len(fields) == 0 {
		return web.Invalid("nothing to change: give name, hosts, scope or the fields of kind %q", c.Kind)
	}
	sec, err := openSecret(h.Sealer, c.ID, sealed)
	if err != nil {
		return err
	}
	if err := b.apply(c, &sec); err != nil {
		return err
	}
	if err := complete(c, &sec); err != nil {
		return err
	}
	out, err := h.save(r, c, &sec)
	if err != nil {
		return web.NotFound(err, "credential", c.ID)
	}
	h.Logger.Info("credential rotated", "vault_id", c.VaultID, "credential_id", c.ID, "fields", fields)
	web.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getCredential(w http.ResponseWriter, r *http.Request) error {
	c, _, err := h.credential(r)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, c)
	return nil
}

// listCredentials pages in memory: a vault holds few credentials, and the
// store answers with all of them.
func (h *Handler) listCredentials(w http.ResponseWriter, r *http.Request) error {
	vaultID := r.PathValue("id")
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	list, err := h.Store.ListCredentials(r.Context(), vaultID)
	if err != nil {
		return web.NotFound(err, "vault", vaultID)
	}
	if after := r.URL.Query().Get("after"); after != "" {
		list = slices.DeleteFunc(list, func(c *core.Credential) bool { return c.ID <= after })
	}
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	if list == nil {
		list = []*core.Credential{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[*core.Credential]{Data: list, HasMore: more})
	return nil
}

func (h *Handler) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	vaultID, id := r.PathValue("id"), r.PathValue("cid")
	if err := h.Store.DeleteCredential(r.Context(), vaultID, id); err != nil {
		return web.NotFound(err, "credential", id)
	}
	h.Logger.Info("credential deleted", "vault_id", vaultID, "credential_id", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sealSecret seals sec with the credential id as aad, so a sealed value
// copied onto another credential does not open.
func sealSecret(s core.Sealer, id string, sec *core.CredentialSecret) ([]byte, error) {
	pt, err := json.Marshal(sec)
	if err != nil {
		return nil, fmt.Errorf("credential %s: encode secret: %w", id, err)
	}
	sealed, err := s.Seal(pt, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("credential %s: seal secret: %w", id, err)
	}
	return sealed, nil
}

// openSecret is sealSecret's inverse. Its errors never quote the plaintext.
func openSecret(s core.Sealer, id string, sealed []byte) (core.CredentialSecret, error) {
	var sec core.CredentialSecret
	pt, err := s.Open(sealed, []byte(id))
	if err != nil {
		return sec, fmt.Errorf("credential %s: %w", id, err)
	}
	if err := json.Unmarshal(pt, &sec); err != nil {
		// Not wrapped: a JSON error could quote part of the secret.
		return sec, fmt.Errorf("credential %s: sealed secret is not valid JSON", id)
	}
	return sec, nil
}
