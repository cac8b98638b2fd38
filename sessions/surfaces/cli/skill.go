package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// skillGroup is the skill command.
var skillGroup = group{name: "skill", summary: "manage skills over the API", subs: []sub{
	{"create", "FOLDER", "upload a skill folder", func(ctx context.Context, c *subcommand, args []string) error { return skillUpload(ctx, c, args, false) }},
	{"update", "ID|NAME FOLDER", "upload a new version of a skill", func(ctx context.Context, c *subcommand, args []string) error { return skillUpload(ctx, c, args, true) }},
	{"list", "", "list skills", skillList},
	{"get", "ID|NAME [PATH]", "show a skill, or print one of its files", skillGet},
	{"delete", "ID|NAME", "delete a skill", skillDelete},
}}

// skillUpload is skill create and skill update: the folder is sent as a
// gzipped tar.
func skillUpload(ctx context.Context, c *subcommand, args []string, update bool) error {
	n := 1
	if update {
		n = 2
	}
	pos, err := c.parse(args, n)
	if err != nil {
		return err
	}
	body, err := packFolder(pos[n-1])
	if err != nil {
		return err
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	var s *core.Skill
	if update {
		s, err = cl.UpdateSkill(ctx, pos[0], "application/gzip", body)
	} else {
		s, err = cl.CreateSkill(ctx, "application/gzip", body)
	}
	if err != nil {
		return err
	}
	return c.showSkill(s)
}

// maxPackBytes stops packing a folder far larger than any skill, such as
// a home directory given by mistake, before it is read into memory.
const maxPackBytes = 256 << 20

// packFolder packs a skill folder as a gzipped tar of its regular files;
// symbolic links and special files are refused, named, since the server
// would refuse them too.
func packFolder(dir string) ([]byte, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("skill folder: %w", err)
	}
	if info, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("skill folder: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("skill folder %s is not a folder", dir)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files, total := 0, int64(0)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		shown := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: a skill holds regular files only", shown)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is a special file (%s): a skill holds regular files only", shown, d.Type())
		}
		if files++; files > core.MaxSkillFiles {
			return fmt.Errorf("skill folder %s has more than %d files", dir, core.MaxSkillFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > maxPackBytes {
			return fmt.Errorf("skill folder %s holds more than %d bytes", dir, maxPackBytes)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: int64(info.Mode().Perm()), Size: int64(len(b))}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func skillList(ctx context.Context, c *subcommand, args []string) error {
	var lp client.ListParams
	c.fs.StringVar(&lp.After, "after", "", "list skills after this `ID`")
	c.fs.IntVar(&lp.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	page, err := cl.ListSkills(ctx, lp)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	rows := [][]string{{"ID", "NAME", "VERSION", "FILES", "BYTES", "UPDATED"}}
	for _, s := range page.Data {
		rows = append(rows, []string{s.ID, s.Name, fmt.Sprint(s.Version), fmt.Sprint(len(s.Files)), fmt.Sprint(s.Size), showTime(s.UpdatedAt)})
	}
	if err := c.table(rows); err != nil {
		return err
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(c.env.stderr, "more: --after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

// skillGet shows a skill version, or prints one of its files as it is.
func skillGet(ctx context.Context, c *subcommand, args []string) error {
	var version int
	c.fs.IntVar(&version, "version", 0, "this `VERSION` (default: the latest)")
	pos, err := c.parseBetween(args, 1, 2)
	if err != nil {
		return err
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		b, err := cl.SkillFile(ctx, pos[0], version, pos[1])
		if err != nil {
			return err
		}
		return c.write(string(b))
	}
	s, err := cl.GetSkill(ctx, pos[0], version)
	if err != nil {
		return err
	}
	return c.showSkill(s)
}

func skillDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	if err := cl.DeleteSkill(ctx, pos[0]); err != nil {
		return err
	}
	return c.deleted(pos[0])
}

// showSkill prints a skill version and its files.
func (c *subcommand) showSkill(s *core.Skill) error {
	if c.json {
		return c.printJSON(s, false)
	}
	err := c.keyValues([][2]string{
		{"id", s.ID},
		{"name", s.Name},
		{"version", fmt.Sprint(s.Version)},
		{"description", s.Description},
		{"bytes", fmt.Sprint(s.Size)},
		{"metadata", showMap(s.Metadata)},
		{"created_at", showTime(s.CreatedAt)},
		{"updated_at", showTime(s.UpdatedAt)},
	})
	if err != nil {
		return err
	}
	rows := [][]string{{"", "PATH", "BYTES", "MODE"}}
	for _, f := range s.Files {
		mode := ""
		if f.Executable {
			mode = "executable"
		}
		rows = append(rows, []string{"", f.Path, fmt.Sprint(f.Size), mode})
	}
	if err := c.write("files:\n"); err != nil {
		return err
	}
	return c.table(rows)
}
