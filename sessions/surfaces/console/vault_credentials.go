package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// maxCredentialsShown is how many credentials the vault page reads; a
// vault holds few.
const maxCredentialsShown = 1000

// secretFields are the credential fields that hold a value. The console
// sends them to the API and forgets them: they are never put in a page,
// not even back into a refused form.
var secretFields = []string{"token", "value", "access_token", "refresh_token", "client_secret"}

// textFields are the credential fields that are not secret.
var textFields = []string{"name", "hosts", "scope", "header_name", "token_url", "client_id", "scopes", "expires_at"}

// credentialFields are every field of the credential forms, as the API
// names them (so its refusals land under the right one).
var credentialFields = slices.Concat([]string{"kind"}, textFields, secretFields)

// credentialForm is a credential form as typed, without its secret
// fields: a refused form comes back with them empty.
type credentialForm struct {
	// Kind names the create form (static_bearer, header or oauth); ID the
	// credential of a rotate form.
	Kind, ID string
	// Values are the non-secret fields by name.
	Values map[string]string
	Errors formErrors
	// Cleared says secret values were typed and must be typed again.
	Cleared bool
}

// credentialView is one credential on the vault page, with its rotate
// form.
type credentialView struct {
	core.Credential
	Rotate kindForm
}

type vaultPage struct {
	Root, CSRF  string
	Vault       *core.Vault
	Credentials []credentialView
	// More says the vault holds more credentials than the page shows.
	More bool
	// Create are the create forms, one per kind.
	Create []kindForm
}

func (h *Handler) vault(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.renderVault(w, r, s, http.StatusOK, credentialForm{}, credentialForm{})
}

func (h *Handler) renderVault(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, create, rotate credentialForm) {
	id := r.PathValue("id")
	v, err := h.api.GetVault(r.Context(), id)
	if err != nil {
		h.apiFailed(w, r, s, "read the vault", err)
		return
	}
	list, err := h.api.ListCredentials(r.Context(), id, client.ListParams{Limit: maxCredentialsShown})
	if err != nil {
		h.apiFailed(w, r, s, "list the vault's credentials", err)
		return
	}
	p := vaultPage{Root: relative(r, ""), CSRF: s.CSRF, Vault: v, More: list.HasMore, Create: createForms(create)}
	for i := range list.Data {
		c := &list.Data[i]
		p.Credentials = append(p.Credentials, credentialView{Credential: *c, Rotate: rotateForm(c, rotate)})
	}
	h.render(w, r, status, "vault", layout{Title: "Vault " + v.Name, Nav: "vaults", CSRF: s.CSRF, Page: &p})
}

// readCredentialForm reads a credential form: the parameters for the API
// (a field left empty is not given) and the form to show again, without
// its secrets.
func readCredentialForm(r *http.Request) (client.CredentialParams, credentialForm) {
	form := r.PostForm
	text := func(name string) string { return strings.TrimSpace(form.Get(name)) }
	f := credentialForm{Kind: text("kind"), Values: map[string]string{}}
	for _, name := range textFields {
		f.Values[name] = text(name)
	}
	v := f.Values
	given := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	list := func(v string) *[]string {
		items := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
		if len(items) == 0 {
			return nil
		}
		return &items
	}
	p := client.CredentialParams{
		Name: given(v["name"]), Hosts: list(v["hosts"]), HeaderName: given(v["header_name"]), TokenURL: given(v["token_url"]),
		ClientID: given(v["client_id"]), Scopes: list(v["scopes"]), ExpiresAt: given(v["expires_at"]),
	}
	p.Scope = readScope(v["scope"])
	if f.Kind != "" {
		k := core.CredentialKind(f.Kind)
		p.Kind = &k
	}
	// Secrets are taken as typed: the API refuses white space around a
	// value rather than have the console change it.
	secrets := map[string]**string{"token": &p.Token, "value": &p.Value, "access_token": &p.AccessToken, "refresh_token": &p.RefreshToken, "client_secret": &p.ClientSecret}
	for _, name := range secretFields {
		if v := form.Get(name); v != "" {
			*secrets[name] = &v
			f.Cleared = true
		}
	}
	return p, f
}

// readScope reads the owner field: empty (the API's default, global), or
// as core.ParseCredentialScope reads it; a mistake is sent for the API to
// refuse, naming the field.
func readScope(v string) *core.CredentialScope {
	if v == "" {
		return nil
	}
	sc := core.ParseCredentialScope(v)
	return &sc
}

func (h *Handler) createCredential(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	p, f := readCredentialForm(r)
	if _, err := h.api.CreateCredential(r.Context(), r.PathValue("id"), p); err != nil {
		fe, status, ok := refusal(err, credentialFields...)
		if !ok {
			h.failed(w, r, s, "create the credential", err)
			return
		}
		f.Errors = fe
		h.renderVault(w, r, s, status, f, credentialForm{})
		return
	}
	done(w, r, "vaults/"+url.PathEscape(r.PathValue("id")))
}

func (h *Handler) rotateCredential(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	p, f := readCredentialForm(r)
	// A rotate keeps the credential's kind, name, hosts and owner: only
	// its values (and an oauth token's expiry) are replaced.
	p.Kind, p.Name, p.Hosts, p.Scope, f.Kind = nil, nil, nil, nil, ""
	f.ID = r.PathValue("cid")
	if _, err := h.api.RotateCredential(r.Context(), r.PathValue("id"), f.ID, p); err != nil {
		fe, status, ok := refusal(err, credentialFields...)
		if !ok {
			h.failed(w, r, s, "rotate the credential", err)
			return
		}
		f.Errors = fe
		h.renderVault(w, r, s, status, credentialForm{}, f)
		return
	}
	done(w, r, "vaults/"+url.PathEscape(r.PathValue("id"))+"#cred-"+url.PathEscape(f.ID))
}

func (h *Handler) deleteCredential(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if err := h.api.DeleteCredential(r.Context(), r.PathValue("id"), r.PathValue("cid")); err != nil {
		h.apiFailed(w, r, s, "delete the credential", err)
		return
	}
	done(w, r, "vaults/"+url.PathEscape(r.PathValue("id")))
}
