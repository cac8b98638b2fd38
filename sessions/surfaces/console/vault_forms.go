package console

import (
	"slices"

	"github.com/switchboardhq/switchboard/core"
)

// fieldSpec is one input of a credential form, named as the API names
// the field.
type fieldSpec struct {
	Name, Label, Help string
	// Secret fields are password inputs that are never filled in.
	Secret, Optional bool
}

// formField is a fieldSpec as one form shows it.
type formField struct {
	fieldSpec
	// ID is the input's id, unique on the page.
	ID string
	// Value is what was typed, shown again after a refusal; always empty
	// for a secret field.
	Value, Error string
}

// kindForm is the form that creates a credential of one kind, or rotates
// one credential.
type kindForm struct {
	Kind        core.CredentialKind
	Title, Help string
	// ID is the form element's id.
	ID     string
	Fields []formField
	// Error is a refusal that names no field.
	Error string
	// Cleared says the form was refused after secret values were typed,
	// which the person types again.
	Cleared bool
	// Open shows a rotate form unfolded (it was just refused).
	Open bool
}

var (
	nameField  = fieldSpec{Name: "name", Label: "Name"}
	hostsField = fieldSpec{Name: "hosts", Label: "Hosts", Help: "Where it may be sent: host, host:port, or *.example.com for subdomains; separate several with spaces or commas."}
	scopeField = fieldSpec{Name: "scope", Label: "Owner", Optional: true,
		Help: "Which sessions may use it: empty for global (any session), tenant:<tenant> (as sessions name their tenant) or tenant_group:<group>."}
	tokenField = fieldSpec{Name: "token", Label: "Token", Secret: true}
	valueField = fieldSpec{Name: "value", Label: "Value", Secret: true}
	refresh    = fieldSpec{Name: "refresh_token", Label: "Refresh token", Secret: true}
	clientSec  = fieldSpec{Name: "client_secret", Label: "Client secret", Secret: true, Optional: true}
	access     = fieldSpec{Name: "access_token", Label: "Access token", Help: "Optional: without one, the first request refreshes.", Secret: true, Optional: true}
	expiresAt  = fieldSpec{Name: "expires_at", Label: "Access token expires at", Help: "An RFC 3339 time such as 2030-01-02T15:04:05Z.", Optional: true}
)

// credentialKinds are the kinds a credential can be, with the fields of
// their create and rotate forms.
var credentialKinds = []struct {
	Kind           core.CredentialKind
	Title, Help    string
	Create, Rotate []fieldSpec
}{
	{core.CredentialStaticBearer, "Bearer token", "Sent as Authorization: Bearer <token>.",
		[]fieldSpec{nameField, hostsField, scopeField, tokenField}, []fieldSpec{tokenField}},
	{core.CredentialHeader, "Header", "Sent as a header of your choosing, such as X-Api-Key.",
		[]fieldSpec{nameField, hostsField, scopeField, {Name: "header_name", Label: "Header name"}, valueField}, []fieldSpec{valueField}},
	{core.CredentialOAuth, "OAuth", "An access token the gateway refreshes at the token URL with the refresh token, sent as a bearer token.",
		[]fieldSpec{nameField, hostsField, scopeField, {Name: "token_url", Label: "Token URL"}, {Name: "client_id", Label: "Client ID"}, clientSec, refresh, access, expiresAt,
			{Name: "scopes", Label: "Scopes", Help: "Separate several with spaces.", Optional: true}},
		[]fieldSpec{optional(refresh), clientSec, access, expiresAt}},
}

// optional is s as a field that may be left empty: a rotate replaces only
// the values given.
func optional(s fieldSpec) fieldSpec {
	s.Optional = true
	return s
}

// buildForm is the form with fields specs, id prefix prefix, showing what
// typed holds when it is the form that was refused.
func buildForm(kind core.CredentialKind, prefix string, specs []fieldSpec, typed *credentialForm) kindForm {
	f := kindForm{Kind: kind, ID: prefix, Fields: make([]formField, len(specs))}
	for i, s := range specs {
		f.Fields[i] = formField{fieldSpec: s, ID: prefix + "-" + s.Name}
		if typed == nil {
			continue
		}
		if !s.Secret {
			f.Fields[i].Value = typed.Values[s.Name]
		}
		f.Fields[i].Error = typed.Errors.For(s.Name)
	}
	if typed != nil {
		f.Error, f.Cleared, f.Open = typed.Errors.Form, typed.Cleared, true
		// A refusal about a field this form lacks still shows, above it.
		for name, msg := range typed.Errors.Fields {
			if !slices.ContainsFunc(specs, func(s fieldSpec) bool { return s.Name == name }) {
				f.Error = msg
			}
		}
	}
	return f
}

// createForms are the create forms of every kind, typed filled in on the
// one of its kind.
func createForms(typed credentialForm) []kindForm {
	out := make([]kindForm, len(credentialKinds))
	for i, k := range credentialKinds {
		var t *credentialForm
		if typed.Kind == string(k.Kind) {
			t = &typed
		}
		out[i] = buildForm(k.Kind, "credential-"+string(k.Kind), k.Create, t)
		out[i].Title, out[i].Help = k.Title, k.Help
	}
	return out
}

// rotateForm is credential c's rotate form, typed filled in when it was
// the one refused.
func rotateForm(c *core.Credential, typed credentialForm) kindForm {
	var t *credentialForm
	if typed.ID == c.ID {
		t = &typed
	}
	for _, k := range credentialKinds {
		if k.Kind == c.Kind {
			return buildForm(c.Kind, "rotate-"+c.ID, k.Rotate, t)
		}
	}
	return kindForm{Kind: c.Kind, ID: "rotate-" + c.ID}
}
