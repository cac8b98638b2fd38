package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Vault is the vault command: vaults of credentials.
func Vault(d Defaults) command.Command { return vaultGroup.command(d) }

var vaultGroup = group{name: "vault", summary: "manage vaults, which hold the credentials sandboxes use without seeing them", subs: []sub{
	{"create", "NAME", "create a vault", vaultCreate},
	{"list", "", "list vaults", vaultList},
	{"get", "VAULT", "show a vault (its id or name)", vaultGet},
	{"delete", "VAULT", "delete a vault and its credentials", vaultDelete},
}}

func vaultCreate(ctx context.Context, c *subcommand, args []string) error {
	var p client.VaultParams
	meta := kvFlag{}
	c.fs.StringVar(&p.Description, "description", "", "what the vault is for, a `DESCRIPTION`")
	c.fs.Var(meta, "metadata", "`KEY=value` metadata (repeatable)")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	p.Name = pos[0]
	if len(meta) > 0 {
		p.Metadata = meta
	}
	v, err := cl.CreateVault(ctx, p)
	if err != nil {
		return err
	}
	return c.showVault(v)
}

func vaultList(ctx context.Context, c *subcommand, args []string) error {
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	all, err := allVaults(ctx, cl)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(all), false)
	}
	rows := [][]string{{"ID", "NAME", "DESCRIPTION", "UPDATED"}}
	for _, v := range all {
		rows = append(rows, []string{v.ID, v.Name, dash(v.Description), showTime(v.UpdatedAt)})
	}
	return c.table(rows)
}

func vaultGet(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	v, err := findVault(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	return c.showVault(&v)
}

func vaultDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	v, err := findVault(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	if err := cl.DeleteVault(ctx, v.ID); err != nil {
		return err
	}
	return c.deleted(v.ID)
}

func allVaults(ctx context.Context, cl *client.Client) ([]core.Vault, error) {
	return listAll(ctx, cl.ListVaults, func(v core.Vault) string { return v.ID })
}

// findVault finds a vault by id or name.
func findVault(ctx context.Context, cl *client.Client, ref string) (core.Vault, error) {
	all, err := allVaults(ctx, cl)
	if err != nil {
		return core.Vault{}, err
	}
	return find("vault", ref, all, func(v core.Vault) (string, string) { return v.ID, v.Name })
}

func (c *subcommand) showVault(v *core.Vault) error {
	if c.json {
		return c.printJSON(v, false)
	}
	return c.keyValues([][2]string{
		{"id", v.ID},
		{"name", v.Name},
		{"description", v.Description},
		{"metadata", showMap(v.Metadata)},
		{"created_at", showTime(v.CreatedAt)},
		{"updated_at", showTime(v.UpdatedAt)},
	})
}

// deleted says a record is gone; with --json, as {"id", "deleted"}.
func (c *subcommand) deleted(id string) error {
	if c.json {
		return c.printJSON(map[string]any{"id": id, "deleted": true}, false)
	}
	return c.write("deleted " + id + "\n")
}

// readSecret reads a secret value, given as flag, from a file, or stdin for "-", never
// from the command line, where the shell's history and ps would show it;
// one trailing newline is dropped.
func (c *subcommand) readSecret(flag, path string) (string, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(c.env.stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r"), nil
}

// oauthSecrets are the secret fields of an oauth credential, given as a
// JSON object in its value file.
type oauthSecrets struct {
	AccessToken  *string `json:"access_token"`
	RefreshToken *string `json:"refresh_token"`
	ClientSecret *string `json:"client_secret"`
}

// setSecret puts the value read from path into the fields of kind.
func (c *subcommand) setSecret(path string, kind core.CredentialKind, p *client.CredentialParams) error {
	v, err := c.readSecret("value-file", path)
	if err != nil {
		return err
	}
	switch kind {
	case core.CredentialStaticBearer:
		p.Token = &v
	case core.CredentialHeader:
		p.Value = &v
	case core.CredentialOAuth:
		var s oauthSecrets
		dec := json.NewDecoder(bytes.NewReader([]byte(v)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return fmt.Errorf("--value-file of an oauth credential: want a JSON object of access_token, refresh_token, client_secret: %w", err)
		}
		p.AccessToken, p.RefreshToken, p.ClientSecret = s.AccessToken, s.RefreshToken, s.ClientSecret
	default:
		return fmt.Errorf("--kind %q: want static_bearer, header or oauth", kind)
	}
	return nil
}
