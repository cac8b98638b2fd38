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

// Environment is the environment command: what a session's sandbox is
// made of.
func Environment(d Defaults) command.Command { return environmentGroup.command(d) }

var environmentGroup = group{name: "environment", summary: "manage environments: a sandbox's image, packages, network and credentials", subs: []sub{
	{"create", "NAME", "create an environment", func(ctx context.Context, c *subcommand, args []string) error {
		return environmentWrite(ctx, c, args, false)
	}},
	{"list", "", "list environments", environmentList},
	{"get", "ENVIRONMENT", "show an environment (its id or name)", environmentGet},
	{"update", "ENVIRONMENT", "replace the given fields of an environment", func(ctx context.Context, c *subcommand, args []string) error {
		return environmentWrite(ctx, c, args, true)
	}},
	{"delete", "ENVIRONMENT", "delete an environment", environmentDelete},
}}

// environmentFlags are the fields create and update take.
type environmentFlags struct {
	file, description, image, network               string
	apt, pip, npm, goMods, cargo, gem, hosts, creds listFlag
	env                                             kvFlag
}

func (f *environmentFlags) register(c *subcommand) {
	f.env = kvFlag{}
	c.fs.StringVar(&f.file, "file", "", "a `FILE` of the JSON body as in POST /v1/environments (- reads stdin); flags override its fields")
	c.fs.StringVar(&f.description, "description", "", "what the environment is for, a `DESCRIPTION`")
	c.fs.StringVar(&f.image, "image", "", "the sandbox's container `IMAGE`")
	for _, p := range []struct {
		l    *listFlag
		name string
	}{{&f.apt, "apt"}, {&f.pip, "pip"}, {&f.npm, "npm"}, {&f.goMods, "go"}, {&f.cargo, "cargo"}, {&f.gem, "gem"}} {
		c.fs.Var(p.l, p.name, "a `PACKAGE` "+p.name+" installs (repeatable)")
	}
	c.fs.Var(f.env, "env", "`KEY=value` in the sandbox's environment (repeatable)")
	c.fs.StringVar(&f.network, "network", "", "network `MODE`: none or allowlist")
	c.fs.Var(&f.hosts, "allow-host", "with --network allowlist, a `HOST` it may reach (repeatable)")
	c.fs.Var(&f.creds, "credential", "a vault credential its requests carry: its id, or `VAULT/NAME` (repeatable)")
}

// params builds the body from --file and the flags given.
func (f *environmentFlags) params(c *subcommand) (client.EnvironmentParams, error) {
	var p client.EnvironmentParams
	if f.file != "" {
		if err := c.readJSONFile(f.file, &p); err != nil {
			return p, err
		}
	}
	if c.given("description") {
		p.Description = &f.description
	}
	if c.given("image") {
		p.Image = &f.image
	}
	if c.given("apt") || c.given("pip") || c.given("npm") || c.given("go") || c.given("cargo") || c.given("gem") {
		if p.Packages == nil {
			p.Packages = &core.Packages{}
		}
		for _, l := range []struct {
			name string
			from listFlag
			to   *[]string
		}{{"apt", f.apt, &p.Packages.Apt}, {"pip", f.pip, &p.Packages.Pip}, {"npm", f.npm, &p.Packages.Npm}, {"go", f.goMods, &p.Packages.Go}, {"cargo", f.cargo, &p.Packages.Cargo}, {"gem", f.gem, &p.Packages.Gem}} {
			if c.given(l.name) {
				*l.to = l.from
			}
		}
	}
	if c.given("env") {
		m := map[string]string(f.env)
		p.Env = &m
	}
	if c.given("network") || c.given("allow-host") {
		p.Network = &core.NetworkPolicy{Mode: f.network, AllowedHosts: f.hosts}
	}
	if c.given("credential") {
		cr := []string(f.creds)
		p.Credentials = &cr
	}
	return p, nil
}

// readJSONFile decodes a JSON body strictly, so a typo in a field name
// is caught here rather than silently dropped.
func (c *subcommand) readJSONFile(path string, v any) error {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(c.env.stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return fmt.Errorf("--file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("--file %s: %w", path, err)
	}
	return nil
}

// environmentWrite is environment create and environment update.
func environmentWrite(ctx context.Context, c *subcommand, args []string, update bool) error {
	var f environmentFlags
	f.register(c)
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	p, err := f.params(c)
	if err != nil {
		return err
	}
	if p.Credentials != nil {
		if err := resolveCredentials(ctx, cl, *p.Credentials); err != nil {
			return err
		}
	}
	var e *core.Environment
	if update {
		cur, err := getEnvironment(ctx, cl, pos[0])
		if err != nil {
			return err
		}
		if p == (client.EnvironmentParams{}) {
			return &usageError{cmd: c, msg: "environment update: nothing to change; give a flag or --file"}
		}
		// --allow-host alone changes the hosts, not the mode the API
		// would otherwise read as none.
		if p.Network != nil && p.Network.Mode == "" {
			p.Network.Mode = cur.Network.Mode
		}
		e, err = cl.UpdateEnvironment(ctx, cur.ID, p)
		if err != nil {
			return err
		}
	} else {
		p.Name = &pos[0]
		if e, err = cl.CreateEnvironment(ctx, p); err != nil {
			return err
		}
	}
	return c.showEnvironment(e)
}

func environmentList(ctx context.Context, c *subcommand, args []string) error {
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	all, err := listAll(ctx, cl.ListEnvironments, func(e core.Environment) string { return e.ID })
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(all), false)
	}
	rows := [][]string{{"ID", "NAME", "IMAGE", "NETWORK", "UPDATED"}}
	for _, e := range all {
		rows = append(rows, []string{e.ID, e.Name, dash(e.Image), dash(e.Network.Mode), showTime(e.UpdatedAt)})
	}
	return c.table(rows)
}

func environmentGet(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	e, err := getEnvironment(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	return c.showEnvironment(e)
}

func environmentDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	e, err := getEnvironment(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	if err := cl.DeleteEnvironment(ctx, e.ID); err != nil {
		return err
	}
	return c.deleted(e.ID)
}

// getEnvironment gets an environment by id or name, which the API
// resolves; an unknown one names the closest.
func getEnvironment(ctx context.Context, cl *client.Client, ref string) (*core.Environment, error) {
	e, err := cl.GetEnvironment(ctx, ref)
	if err != nil {
		return nil, orClosest(ctx, err, "environment", ref, cl.ListEnvironments, func(e core.Environment) (string, string) { return e.ID, e.Name })
	}
	return e, nil
}

func (c *subcommand) showEnvironment(e *core.Environment) error {
	if c.json {
		return c.printJSON(e, false)
	}
	var pk []string
	for _, l := range []struct {
		name string
		pkgs []string
	}{{"apt", e.Packages.Apt}, {"pip", e.Packages.Pip}, {"npm", e.Packages.Npm}, {"go", e.Packages.Go}, {"cargo", e.Packages.Cargo}, {"gem", e.Packages.Gem}} {
		if len(l.pkgs) > 0 {
			pk = append(pk, l.name+": "+strings.Join(l.pkgs, " "))
		}
	}
	network := e.Network.Mode
	if len(e.Network.AllowedHosts) > 0 {
		network += " " + strings.Join(e.Network.AllowedHosts, " ")
	}
	return c.keyValues([][2]string{
		{"id", e.ID},
		{"name", e.Name},
		{"description", e.Description},
		{"image", e.Image},
		{"packages", strings.Join(pk, "\n")},
		{"env", showMap(e.Env)},
		{"network", network},
		{"credentials", strings.Join(e.Credentials, " ")},
		{"metadata", showMap(e.Metadata)},
		{"created_at", showTime(e.CreatedAt)},
		{"updated_at", showTime(e.UpdatedAt)},
	})
}

// resolveCredentials replaces each VAULT/NAME in refs with the id of that
// credential; an id is kept as it is.
func resolveCredentials(ctx context.Context, cl *client.Client, refs []string) error {
	for i, ref := range refs {
		vault, name, ok := strings.Cut(ref, "/")
		if !ok {
			continue
		}
		_, cr, err := findCredential(ctx, cl, vault, name)
		if err != nil {
			return err
		}
		refs[i] = cr.ID
	}
	return nil
}
