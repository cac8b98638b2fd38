package skill

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// readUpTo reads r until EOF or left+1 bytes, so the caller sees that a
// content is larger than left without reading more of it.
func readUpTo(r io.Reader, left int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, left+1))
}

func (c *collector) readZip(body []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	// Insecure names are refused below, each naming its entry.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("the zip cannot be read: %v: %w", err, core.ErrInvalid)
	}
	if len(zr.File) > maxEntries {
		return fmt.Errorf("the zip has %d entries: at most %d: %w", len(zr.File), maxEntries, core.ErrInvalid)
	}
	for _, f := range zr.File {
		// Finder's zips carry resource forks under __MACOSX/: not the
		// folder's files.
		if strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		if err := c.zipEntry(f); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) zipEntry(f *zip.File) error {
	mode := f.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return refuse(f.Name, "symbolic links")
	case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
		return c.dir(f.Name)
	case !mode.IsRegular():
		return refuse(f.Name, "devices, pipes, sockets and other special files")
	}
	p, err := c.file(f.Name)
	if err != nil {
		return err
	}
	return c.add(f.Name, p, mode&0o111 != 0, func(left int64) ([]byte, error) {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("entry %q: %v: %w", f.Name, err, core.ErrInvalid)
		}
		defer rc.Close()
		b, err := readUpTo(rc, left)
		if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) {
			// The zip reader refuses a content longer than its header
			// declares: an inflating entry that lies about its size.
			return nil, fmt.Errorf("entry %q: its content does not match its header (%v): %w", f.Name, err, core.ErrInvalid)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %q: %v: %w", f.Name, err, core.ErrInvalid)
		}
		return b, nil
	})
}

// tarOverhead is what a tar stream may hold beside its files' contents:
// each entry's header and padding, and long names' extended headers.
const tarOverhead = maxEntries*2*512 + 1<<20

func (c *collector) readTarGz(body []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the gzip stream cannot be read: %v: %w", err, core.ErrInvalid)
	}
	limit := c.maxBytes + tarOverhead
	return c.readTar(&boundedReader{r: zr, left: limit, limit: limit})
}

// boundedReader fails once more than limit bytes were read, so a gzip
// stream that inflates to endless tar padding is cut off too.
type boundedReader struct {
	r           io.Reader
	left, limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the gzip stream inflates to more than %d bytes: %w", b.limit, core.ErrInvalid)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (c *collector) readTar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, core.ErrInvalid) {
			return err
		}
		// Insecure names are refused below, each naming its entry.
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("the tar cannot be read: %v: %w", err, core.ErrInvalid)
		}
		if err := c.tarEntry(tr, h); err != nil {
			return err
		}
	}
}

func (c *collector) tarEntry(tr *tar.Reader, h *tar.Header) error {
	switch h.Typeflag {
	case tar.TypeReg:
	case tar.TypeDir:
		return c.dir(h.Name)
	case tar.TypeXGlobalHeader:
		return nil // git archive's commit id; tar reads it
	case tar.TypeSymlink:
		return refuse(h.Name, "symbolic links")
	case tar.TypeLink:
		return refuse(h.Name, "hard links")
	case tar.TypeChar, tar.TypeBlock:
		return refuse(h.Name, "devices")
	case tar.TypeFifo:
		return refuse(h.Name, "named pipes")
	default:
		return fmt.Errorf("entry %q: tar entries of type %q are not allowed in a skill: %w", h.Name, h.Typeflag, core.ErrInvalid)
	}
	p, err := c.file(h.Name)
	if err != nil {
		return err
	}
	return c.add(h.Name, p, h.Mode&0o111 != 0, func(left int64) ([]byte, error) {
		b, err := readUpTo(tr, left)
		if errors.Is(err, core.ErrInvalid) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("entry %q: %v: %w", h.Name, err, core.ErrInvalid)
		}
		return b, nil
	})
}

// readJSON reads {"files": {"path": "content", ...}}, each path once: a
// map would keep the last of two equal keys silently.
func (c *collector) readJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	bad := func(format string, args ...any) error {
		return fmt.Errorf("JSON upload: "+format+": %w", append(args, core.ErrInvalid)...)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("want an object {\"files\": {\"path\": \"content\", ...}}")
	}
	seenFiles := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("%v", err)
		}
		if tok != "files" {
			return bad("unknown field %q: want only \"files\"", tok)
		}
		if seenFiles {
			return bad("field \"files\" appears twice")
		}
		seenFiles = true
		if err := c.jsonFiles(dec, bad); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("data after the JSON object")
	}
	if !seenFiles {
		return bad("field \"files\" is required")
	}
	return nil
}

func (c *collector) jsonFiles(dec *json.Decoder, bad func(string, ...any) error) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("field \"files\" must be an object of path to content")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("%v", err)
		}
		name := tok.(string) // object keys are strings
		p, err := c.file(name)
		if err != nil {
			return err
		}
		var content string
		if err := dec.Decode(&content); err != nil {
			return bad("files[%q]: want the file's content as a string", name)
		}
		err = c.add(name, p, false, func(int64) ([]byte, error) { return []byte(content), nil })
		if err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}
