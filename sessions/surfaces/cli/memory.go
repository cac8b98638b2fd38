package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Memory is the memory command: memory stores and their files.
func Memory(d Defaults) command.Command { return memoryGroup.command(d) }

// memoryGroup is the memory command.
var memoryGroup = group{name: "memory", summary: "manage memory stores and read their files", subs: []sub{
	{"stores", "", "list memory stores", memoryStores},
	{"create", "NAME", "create a memory store", memoryCreate},
	{"ls", "STORE", "list a store's files", memoryLs},
	{"cat", "STORE PATH", "print a file of a store", memoryCat},
	{"log", "STORE PATH", "list a file's versions", memoryLog},
	{"revert", "STORE PATH VERSION", "make a file's old version its latest", memoryRevert},
}}

func memoryStores(ctx context.Context, c *subcommand, args []string) error {
	var p client.ListParams
	c.fs.StringVar(&p.After, "after", "", "list stores after this `ID`")
	c.fs.IntVar(&p.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	page, err := cl.ListMemoryStores(ctx, p)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	rows := [][]string{{"ID", "NAME", "SHARED", "DESCRIPTION", "UPDATED"}}
	for _, m := range page.Data {
		rows = append(rows, []string{m.ID, m.Name, strconv.FormatBool(m.Shared), clip(m.Description), showTime(m.UpdatedAt)})
	}
	return c.table(rows)
}

func memoryCreate(ctx context.Context, c *subcommand, args []string) error {
	var shared bool
	var description string
	c.fs.BoolVar(&shared, "shared", false, "one partition for every tenant (default: files are kept per tenant)")
	c.fs.StringVar(&description, "description", "", "what the store holds, a `DESCRIPTION`; agents see it when they have several stores")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	p := client.MemoryStoreParams{Name: &pos[0], Shared: &shared}
	if c.given("description") {
		p.Description = &description
	}
	m, err := cl.CreateMemoryStore(ctx, p)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(m, false)
	}
	l := m.Limits.Or(core.DefaultMemoryLimits)
	return c.keyValues([][2]string{
		{"id", m.ID},
		{"name", m.Name},
		{"shared", strconv.FormatBool(m.Shared)},
		{"description", m.Description},
		{"limits", fmt.Sprintf("max_file_bytes=%d max_partition_bytes=%d max_versions=%d", l.MaxFileBytes, l.MaxPartitionBytes, l.MaxVersions)},
		{"created_at", showTime(m.CreatedAt)},
	})
}

// tenantFlag registers --tenant.
func (c *subcommand) tenantFlag() *string {
	return c.fs.String("tenant", "", "the `TENANT` whose files to read (required unless the store is shared): <provider>:<workspace, organization or repository>, or api")
}

func memoryLs(ctx context.Context, c *subcommand, args []string) error {
	tenant := c.tenantFlag()
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	files, err := cl.MemoryFiles(ctx, pos[0], *tenant)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(files, false)
	}
	rows := [][]string{{"PATH", "SIZE", "VERSION", "WRITTEN"}}
	for _, f := range files {
		rows = append(rows, []string{f.Path, strconv.Itoa(f.Size), strconv.Itoa(f.Version), showTime(f.CreatedAt)})
	}
	return c.table(rows)
}

func memoryCat(ctx context.Context, c *subcommand, args []string) error {
	tenant := c.tenantFlag()
	version := c.fs.Int("version", 0, "this `VERSION` (default: the latest)")
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	v, err := cl.MemoryFile(ctx, pos[0], *tenant, pos[1], *version)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(v, false)
	}
	if v.Deleted {
		return fmt.Errorf("%s version %d is a deletion", v.Path, v.Version)
	}
	return c.write(v.Content)
}

func memoryLog(ctx context.Context, c *subcommand, args []string) error {
	tenant := c.tenantFlag()
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	history, err := cl.MemoryHistory(ctx, pos[0], *tenant, pos[1])
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(history, false)
	}
	rows := [][]string{{"VERSION", "OP", "SIZE", "SESSION", "TURN", "BY", "WRITTEN"}}
	for _, v := range history {
		op := v.Op
		if v.Deleted {
			op += " (deleted)"
		}
		rows = append(rows, []string{strconv.Itoa(v.Version), op, strconv.Itoa(v.Size), v.SessionID, v.TurnID, v.By, showTime(v.CreatedAt)})
	}
	return c.table(rows)
}

func memoryRevert(ctx context.Context, c *subcommand, args []string) error {
	tenant := c.tenantFlag()
	pos, err := c.parse(args, 3)
	if err != nil {
		return err
	}
	version, err := strconv.Atoi(pos[2])
	if err != nil || version < 1 {
		return &usageError{cmd: c, msg: fmt.Sprintf("memory revert: VERSION %q: want a version number from 1", pos[2])}
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	v, err := cl.RevertMemory(ctx, pos[0], client.MemoryRevert{Tenant: *tenant, Path: pos[1], Version: version})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(v, false)
	}
	return c.write(fmt.Sprintf("%s: version %d has the content of version %d\n", v.Path, v.Version, version))
}
