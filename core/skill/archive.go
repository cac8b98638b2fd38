package skill

import (
	"bytes"
	"fmt"
	"mime"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Formats an upload of a skill folder may take.
const (
	FormatZip   = "zip"
	FormatTar   = "tar"
	FormatTarGz = "tar.gz"
	FormatJSON  = "json"
)

// maxEntries bounds an archive's entries, directories included, so an
// archive of endless empty folders is refused rather than walked.
const maxEntries = 5 * core.MaxSkillFiles

// ReadArchive reads an upload of a skill folder: a zip, a tar, a gzipped
// tar, or JSON {"files": {"path": "content", ...}}. The format comes from
// the content's first bytes, or from contentType when they say nothing (a
// JSON body, an old tar). When SKILL.md is not at the root but every entry
// is under one folder, that folder is the skill's (people zip the folder
// itself). Files' contents are counted while they are read, never from
// the sizes an archive declares, and reading stops past maxBytes in all
// (≤ 0: core.DefaultMaxSkillBytes), so an archive that inflates beyond it
// is refused without being inflated. Every refusal wraps core.ErrInvalid
// and names the entry or field at fault.
func ReadArchive(body []byte, contentType string, maxBytes int64) (core.SkillUpload, error) {
	if maxBytes <= 0 {
		maxBytes = core.DefaultMaxSkillBytes
	}
	format, err := DetectFormat(body, contentType)
	if err != nil {
		return core.SkillUpload{}, err
	}
	c := &collector{maxBytes: maxBytes, files: map[string][]byte{}, exec: map[string]bool{}, dirs: map[string]bool{}}
	switch format {
	case FormatZip:
		err = c.readZip(body)
	case FormatTar:
		err = c.readTar(bytes.NewReader(body))
	case FormatTarGz:
		err = c.readTarGz(body)
	case FormatJSON:
		err = c.readJSON(body)
	}
	if err != nil {
		return core.SkillUpload{}, err
	}
	return c.upload()
}

// DetectFormat names an upload's format: its magic bytes first, since
// clients send the wrong Content-Type often (curl's --data-binary says
// form data), then contentType.
func DetectFormat(body []byte, contentType string) (string, error) {
	switch {
	case bytes.HasPrefix(body, []byte("PK\x03\x04")), bytes.HasPrefix(body, []byte("PK\x05\x06")):
		return FormatZip, nil
	case bytes.HasPrefix(body, []byte("\x1f\x8b")):
		return FormatTarGz, nil
	case len(body) >= 263 && string(body[257:262]) == "ustar":
		return FormatTar, nil
	case bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")):
		return FormatJSON, nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/zip", "application/x-zip-compressed":
		return FormatZip, nil
	case "application/x-tar", "application/tar":
		return FormatTar, nil
	case "application/gzip", "application/x-gzip", "application/x-gtar", "application/x-tar+gzip":
		return FormatTarGz, nil
	case "application/json":
		return FormatJSON, nil
	}
	if len(body) == 0 {
		return "", fmt.Errorf("the upload is empty: want a zip, a tar, a gzipped tar or JSON of a skill folder: %w", core.ErrInvalid)
	}
	return "", fmt.Errorf("the upload (Content-Type %q) is neither a zip, a tar, a gzipped tar nor JSON {\"files\": {...}}: %w", contentType, core.ErrInvalid)
}

// collector gathers an archive's files and checks each entry as it comes.
type collector struct {
	maxBytes int64
	total    int64
	entries  int
	files    map[string][]byte
	exec     map[string]bool
	dirs     map[string]bool
}

// file checks a file entry's name and returns it as a skill path (a
// leading "./", as tar -C dir . writes, dropped).
func (c *collector) file(name string) (string, error) {
	p, err := c.path(name, strings.TrimPrefix(name, "./"))
	if err != nil {
		return "", err
	}
	if _, dup := c.files[p]; dup || c.dirs[p] {
		return "", fmt.Errorf("entry %q: the path %q appears twice: %w", name, p, core.ErrInvalid)
	}
	return p, nil
}

// dir checks a folder entry; folders hold nothing of their own, but they
// count as entries and tell where the skill's top folder is.
func (c *collector) dir(name string) error {
	p := strings.TrimSuffix(strings.TrimPrefix(name, "./"), "/")
	if p == "" || p == "." {
		_, err := c.path(name, "")
		return err
	}
	p, err := c.path(name, p)
	if err != nil {
		return err
	}
	if _, dup := c.files[p]; dup {
		return fmt.Errorf("entry %q: the path %q appears twice: %w", name, p, core.ErrInvalid)
	}
	c.dirs[p] = true
	return nil
}

// path counts an entry and checks its path p ("" for the root folder).
func (c *collector) path(name, p string) (string, error) {
	c.entries++
	if c.entries > maxEntries {
		return "", fmt.Errorf("entry %q: the upload has more than %d entries: %w", name, maxEntries, core.ErrInvalid)
	}
	if p == "" {
		return "", nil
	}
	if err := core.ValidSkillPath(p); err != nil {
		return "", fmt.Errorf("entry %q: %w", name, err)
	}
	return p, nil
}

// refuse is the error of an entry of a kind no skill may hold.
func refuse(name, what string) error {
	return fmt.Errorf("entry %q: %s are not allowed in a skill: %w", name, what, core.ErrInvalid)
}

// add keeps a file's content, read by read with at most left bytes of
// the budget; read returns more than left when the content is larger.
func (c *collector) add(name, p string, executable bool, read func(left int64) ([]byte, error)) error {
	if len(c.files) >= core.MaxSkillFiles {
		return fmt.Errorf("entry %q: a skill has at most %d files: %w", name, core.MaxSkillFiles, core.ErrInvalid)
	}
	left := c.maxBytes - c.total
	b, err := read(left)
	if err != nil {
		return err
	}
	if int64(len(b)) > left {
		return fmt.Errorf("entry %q: the files exceed %d bytes uncompressed: %w", name, c.maxBytes, core.ErrInvalid)
	}
	c.total += int64(len(b))
	c.files[p] = b
	if executable {
		c.exec[p] = true
	}
	return nil
}

// upload strips a lone top folder, checks that no file is also a folder,
// and parses SKILL.md.
func (c *collector) upload() (core.SkillUpload, error) {
	if len(c.files) == 0 {
		return core.SkillUpload{}, fmt.Errorf("the upload holds no files: %w", core.ErrInvalid)
	}
	folder := ""
	if _, ok := c.files[core.SkillManifestFile]; !ok {
		folder = c.topFolder()
		if folder != "" {
			c.strip(folder + "/")
		}
	}
	paths := make([]string, 0, len(c.files))
	for p := range c.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			if _, clash := c.files[d]; clash {
				return core.SkillUpload{}, fmt.Errorf("entry %q: %q is both a file and a folder: %w", p, d, core.ErrInvalid)
			}
		}
	}
	raw, ok := c.files[core.SkillManifestFile]
	if !ok {
		where := "at the upload's root"
		if folder != "" {
			where = fmt.Sprintf("in the upload's folder %q", folder)
		}
		return core.SkillUpload{}, fmt.Errorf("no %s %s: %w", core.SkillManifestFile, where, core.ErrInvalid)
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return core.SkillUpload{}, err
	}
	return core.SkillUpload{Name: m.Name, Description: m.Description, Metadata: m.Metadata, Files: c.files, Executable: c.exec}, nil
}

// topFolder is the one folder every file and folder is under, or "".
func (c *collector) topFolder() string {
	top := ""
	under := func(p string, isDir bool) bool {
		first, _, nested := strings.Cut(p, "/")
		if !nested && !isDir {
			return false // a file at the root
		}
		if top == "" {
			top = first
		}
		return first == top
	}
	for p := range c.files {
		if !under(p, false) {
			return ""
		}
	}
	for d := range c.dirs {
		if !under(d, true) {
			return ""
		}
	}
	return top
}

// strip moves every file out of the folder prefix.
func (c *collector) strip(prefix string) {
	files, exec := map[string][]byte{}, map[string]bool{}
	for p, b := range c.files {
		files[strings.TrimPrefix(p, prefix)] = b
		if c.exec[p] {
			exec[strings.TrimPrefix(p, prefix)] = true
		}
	}
	c.files, c.exec = files, exec
}
