package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Credential is the credential command: the credentials of a vault. A
// secret value is read from --value-file (a file, or - for stdin), never
// from a flag.
func Credential(d Defaults) command.Command { return credentialGroup.command(d) }

var credentialGroup = group{name: "credential", summary: "manage a vault's credentials; values are read from a file or stdin", subs: []sub{
	{"create", "VAULT", "add a credential to a vault, its value from --value-file", credentialCreate},
	{"list", "VAULT", "list a vault's credentials", credentialList},
	{"get", "VAULT CREDENTIAL", "show a credential (never its value)", credentialGet},
	{"rotate", "VAULT CREDENTIAL", "replace a credential's value (--value-file) or other fields", credentialRotate},
	{"delete", "VAULT CREDENTIAL", "delete a credential", credentialDelete},
}}

// credentialFlags are the fields create and rotate take.
type credentialFlags struct {
	name, kind, headerName, tokenURL, clientID, expiresAt, valueFile, scope string
	hosts, oauthScopes                                                      listFlag
}

func (f *credentialFlags) register(c *subcommand) {
	c.fs.StringVar(&f.name, "name", "", "the credential's `NAME` (names need not be unique: where two share one, give the id)")
	c.fs.StringVar(&f.kind, "kind", "", "`KIND`: static_bearer, header or oauth")
	c.fs.Var(&f.hosts, "host", "a `HOST` it may be sent to (repeatable; *.example.com for subdomains)")
	c.fs.StringVar(&f.headerName, "header-name", "", "kind header: the `HEADER` it is sent in")
	c.fs.StringVar(&f.tokenURL, "token-url", "", "kind oauth: the `URL` where its token is refreshed")
	c.fs.StringVar(&f.clientID, "client-id", "", "kind oauth: the client `ID`")
	c.fs.StringVar(&f.scope, "scope", "", "the credential's owner, which sessions may use it, a `SCOPE`: "+core.ScopeSpelling+" (global when not given)")
	c.fs.Var(&f.oauthScopes, "oauth-scope", "kind oauth: a `SCOPE` its token is asked for (repeatable)")
	c.fs.StringVar(&f.expiresAt, "expires-at", "", "kind oauth: the access token's expiry, an RFC 3339 `TIME`")
	c.fs.StringVar(&f.valueFile, "value-file", "", "a `FILE` holding the secret (- reads stdin): the token, the header's value, or for oauth a JSON object of access_token, refresh_token, client_secret")
}

// params are the given fields; a malformed --scope is a usage error.
func (f *credentialFlags) params(c *subcommand) (client.CredentialParams, error) {
	var p client.CredentialParams
	str := func(flagName string, v string, dst **string) {
		if c.given(flagName) {
			*dst = &v
		}
	}
	str("name", f.name, &p.Name)
	str("header-name", f.headerName, &p.HeaderName)
	str("token-url", f.tokenURL, &p.TokenURL)
	str("client-id", f.clientID, &p.ClientID)
	str("expires-at", f.expiresAt, &p.ExpiresAt)
	if c.given("kind") {
		k := core.CredentialKind(f.kind)
		p.Kind = &k
	}
	if c.given("host") {
		h := []string(f.hosts)
		p.Hosts = &h
	}
	if c.given("oauth-scope") {
		s := []string(f.oauthScopes)
		p.Scopes = &s
	}
	if c.given("scope") {
		sc := core.ParseCredentialScope(f.scope)
		if err := sc.Validate(); err != nil {
			return p, &usageError{cmd: c, msg: fmt.Sprintf("%s: --scope %q: want %s (%v)", c.name, f.scope, core.ScopeSpelling, err)}
		}
		p.Scope = &sc
	}
	return p, nil
}

func credentialCreate(ctx context.Context, c *subcommand, args []string) error {
	var f credentialFlags
	f.register(c)
	pos, err := c.parse(args, 1)
	if err != nil {
		return err
	}
	if f.name == "" || f.kind == "" || f.valueFile == "" {
		return &usageError{cmd: c, msg: "credential create: --name, --kind and --value-file are required"}
	}
	p, err := f.params(c)
	if err != nil {
		return err
	}
	if err := c.setSecret(f.valueFile, core.CredentialKind(f.kind), &p); err != nil {
		return err
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	v, err := findVault(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	cr, err := cl.CreateCredential(ctx, v.ID, p)
	if err != nil {
		return err
	}
	return c.showCredential(cr)
}

func credentialList(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	v, err := findVault(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	all, err := allCredentials(ctx, cl, v.ID)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(all), false)
	}
	rows := [][]string{{"ID", "NAME", "KIND", "HOSTS", "SCOPE", "UPDATED"}}
	for _, cr := range all {
		rows = append(rows, []string{cr.ID, cr.Name, string(cr.Kind), strings.Join(cr.Hosts, ","), showScope(cr.Scope), showTime(cr.UpdatedAt)})
	}
	return c.table(rows)
}

func credentialGet(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	_, cr, err := findCredential(ctx, cl, pos[0], pos[1])
	if err != nil {
		return err
	}
	return c.showCredential(&cr)
}

func credentialRotate(ctx context.Context, c *subcommand, args []string) error {
	var f credentialFlags
	f.register(c)
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	v, cr, err := findCredential(ctx, cl, pos[0], pos[1])
	if err != nil {
		return err
	}
	p, err := f.params(c)
	if err != nil {
		return err
	}
	if f.valueFile != "" {
		if err := c.setSecret(f.valueFile, cr.Kind, &p); err != nil {
			return err
		}
	}
	if p == (client.CredentialParams{}) {
		return &usageError{cmd: c, msg: "credential rotate: nothing to change; give --value-file or a field"}
	}
	out, err := cl.RotateCredential(ctx, v.ID, cr.ID, p)
	if err != nil {
		return err
	}
	return c.showCredential(out)
}

func credentialDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	v, cr, err := findCredential(ctx, cl, pos[0], pos[1])
	if err != nil {
		return err
	}
	if err := cl.DeleteCredential(ctx, v.ID, cr.ID); err != nil {
		return err
	}
	return c.deleted(cr.ID)
}

func allCredentials(ctx context.Context, cl *client.Client, vaultID string) ([]core.Credential, error) {
	list := func(ctx context.Context, p client.ListParams) (*web.Page[core.Credential], error) {
		return cl.ListCredentials(ctx, vaultID, p)
	}
	return listAll(ctx, list, func(cr core.Credential) string { return cr.ID })
}

// findCredential finds a vault, then its credential, each by id or name.
func findCredential(ctx context.Context, cl *client.Client, vaultRef, ref string) (core.Vault, core.Credential, error) {
	v, err := findVault(ctx, cl, vaultRef)
	if err != nil {
		return v, core.Credential{}, err
	}
	all, err := allCredentials(ctx, cl, v.ID)
	if err != nil {
		return v, core.Credential{}, err
	}
	cr, err := find("credential of vault "+v.Name, ref, all, func(cr core.Credential) (string, string) { return cr.ID, cr.Name })
	return v, cr, err
}

// showScope writes a scope as --scope takes it.
func showScope(s core.CredentialScope) string {
	switch s.Type {
	case core.ScopeTenant:
		return "tenant:" + s.Tenant
	case core.ScopeTenantGroup:
		return "tenant_group:" + s.TenantGroup
	}
	return string(s.Normal().Type)
}

func (c *subcommand) showCredential(cr *core.Credential) error {
	if c.json {
		return c.printJSON(cr, false)
	}
	return c.keyValues([][2]string{
		{"id", cr.ID},
		{"vault_id", cr.VaultID},
		{"name", cr.Name},
		{"kind", string(cr.Kind)},
		{"hosts", strings.Join(cr.Hosts, " ")},
		{"scope", showScope(cr.Scope)},
		{"header_name", cr.HeaderName},
		{"token_url", cr.TokenURL},
		{"client_id", cr.ClientID},
		{"scopes", strings.Join(cr.Scopes, " ")},
		{"expires_at", showTimePtr(cr.ExpiresAt)},
		{"created_at", showTime(cr.CreatedAt)},
		{"updated_at", showTime(cr.UpdatedAt)},
	})
}
