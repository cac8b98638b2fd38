package skill

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

const manifest = "---\nname: deploy\ndescription: Ship a release.\n---\n# Deploy\n"

// ent is one archive entry a test builds.
type ent struct {
	name, body string
	mode       fs.FileMode // zip: the entry's mode; tar: its permission bits
	typ        byte        // tar only; 0 is a regular file
	link       string
}

func zipOf(t testing.TB, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarOf(t testing.TB, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: int64(e.mode.Perm()), Size: int64(len(e.body)), Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			h = &tar.Header{Name: e.name, Typeflag: e.typ, PAXRecords: map[string]string{"comment": "a commit id"}}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zeros is a raw deflate stream of n MiB of zero bytes, about 1 KiB per
// MiB: one MiB compressed, flushed to a byte boundary, repeated, then a
// final empty block. It is built without inflating anything.
func zeros(t testing.TB, prefix []byte, mib int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(prefix); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	bw, _ := flate.NewWriter(&block, flate.BestCompression)
	if _, err := bw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	for range mib {
		out.Write(block.Bytes())
	}
	var final bytes.Buffer
	fw, _ := flate.NewWriter(&final, flate.BestCompression)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Write(final.Bytes())
	return out.Bytes()
}

// zipBomb is a zip of SKILL.md and one entry inflating to mib MiB whose
// header declares declared bytes.
func zipBomb(t testing.TB, mib int, declared uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("SKILL.md")
	_, _ = w.Write([]byte(manifest))
	raw := zeros(t, nil, mib)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CompressedSize64: uint64(len(raw)), UncompressedSize64: declared, CRC32: crc32.ChecksumIEEE(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarGzBomb is a gzipped tar whose one file is mib MiB of zeros.
func tarGzBomb(t testing.TB, mib int) []byte {
	t.Helper()
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "bomb.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(mib) << 20}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // gzip header: deflate, no flags
	out.Write(zeros(t, hdr.Bytes(), mib))
	out.Write(make([]byte, 8)) // trailer; never reached
	return out.Bytes()
}

func TestReadArchive(t *testing.T) {
	files := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name, contentType string
		body              []byte
		want              map[string]string
		exec              []string
	}{
		{name: "zip", body: zipOf(t, ent{name: "SKILL.md", body: manifest}, ent{name: "scripts/", mode: fs.ModeDir | 0o755}, ent{name: "scripts/run.sh", body: "echo", mode: 0o755}),
			want: files("SKILL.md", manifest, "scripts/run.sh", "echo"), exec: []string{"scripts/run.sh"}},
		{name: "zip of the folder, from Finder", body: zipOf(t, ent{name: "deploy/", mode: fs.ModeDir | 0o755}, ent{name: "deploy/SKILL.md", body: manifest}, ent{name: "deploy/a/b.txt", body: "b"}, ent{name: "__MACOSX/deploy/._SKILL.md", body: "fork"}),
			want: files("SKILL.md", manifest, "a/b.txt", "b")},
		{name: "tar of dot", contentType: "application/x-tar", body: tarOf(t, ent{name: "./", typ: tar.TypeDir}, ent{name: "./SKILL.md", body: manifest}, ent{name: "./bin/x", body: "x", mode: 0o755}),
			want: files("SKILL.md", manifest, "bin/x", "x"), exec: []string{"bin/x"}},
		{name: "tar with a global header", body: tarOf(t, ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader}, ent{name: "SKILL.md", body: manifest}),
			want: files("SKILL.md", manifest)},
		{name: "tar.gz of the folder", contentType: "application/gzip", body: gz(t, tarOf(t, ent{name: "deploy/", typ: tar.TypeDir}, ent{name: "deploy/SKILL.md", body: manifest}, ent{name: "deploy/ref.md", body: "r"})),
			want: files("SKILL.md", manifest, "ref.md", "r")},
		{name: "json", contentType: "application/json", body: []byte(`{"files": {"SKILL.md": ` + fmt.Sprintf("%q", manifest) + `, "docs/x.md": "x"}}`),
			want: files("SKILL.md", manifest, "docs/x.md", "x")},
		{name: "json with a wrong content type", contentType: "application/x-www-form-urlencoded", body: []byte(` {"files": {"SKILL.md": ` + fmt.Sprintf("%q", manifest) + `}}`),
			want: files("SKILL.md", manifest)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := ReadArchive(tt.body, tt.contentType, 0)
			if err != nil {
				t.Fatal(err)
			}
			if up.Name != "deploy" || up.Description != "Ship a release." {
				t.Errorf("name %q, description %q", up.Name, up.Description)
			}
			got := map[string]string{}
			for p, b := range up.Files {
				got[p] = string(b)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("files %v, want %v", got, tt.want)
			}
			var exec []string
			for p, x := range up.Executable {
				if x {
					exec = append(exec, p)
				}
			}
			if fmt.Sprint(exec) != fmt.Sprint(tt.exec) {
				t.Errorf("executable %v, want %v", exec, tt.exec)
			}
		})
	}
}

// refusals are uploads ReadArchive must refuse, with what the error says;
// the fuzz target starts from them too.
func refusals(t testing.TB) []struct {
	name   string
	body   []byte
	errHas string
} {
	skill := ent{name: "SKILL.md", body: manifest}
	many := []ent{skill}
	for i := range core.MaxSkillFiles {
		many = append(many, ent{name: fmt.Sprintf("f%d", i), body: "x"})
	}
	return []struct {
		name   string
		body   []byte
		errHas string
	}{
		{"absolute path", tarOf(t, skill, ent{name: "/etc/passwd", body: "x"}), `entry "/etc/passwd": file "/etc/passwd": absolute`},
		{"dot dot in a zip", zipOf(t, skill, ent{name: "../evil", body: "x"}), `entry "../evil"`},
		{"dot dot inside", tarOf(t, skill, ent{name: "a/../../evil", body: "x"}), `entry "a/../../evil"`},
		{"symlink in a tar", tarOf(t, skill, ent{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}), `entry "link": symbolic links`},
		{"symlink in a zip", zipOf(t, skill, ent{name: "link", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), `entry "link": symbolic links`},
		{"hard link", tarOf(t, skill, ent{name: "hard", typ: tar.TypeLink, link: "SKILL.md"}), `entry "hard": hard links`},
		{"char device", tarOf(t, skill, ent{name: "tty", typ: tar.TypeChar}), `entry "tty": devices`},
		{"block device", tarOf(t, skill, ent{name: "sda", typ: tar.TypeBlock}), `entry "sda": devices`},
		{"fifo", tarOf(t, skill, ent{name: "pipe", typ: tar.TypeFifo}), `entry "pipe": named pipes`},
		{"device in a zip", zipOf(t, skill, ent{name: "dev", mode: fs.ModeDevice | 0o600}), `entry "dev": devices, pipes`},
		{"duplicate", tarOf(t, skill, ent{name: "a", body: "1"}, ent{name: "a", body: "2"}), `entry "a": the path "a" appears twice`},
		{"duplicate spelled with dot", tarOf(t, skill, ent{name: "a", body: "1"}, ent{name: "./a", body: "2"}), `entry "./a": the path "a" appears twice`},
		{"duplicate in a zip", zipOf(t, skill, skill), `entry "SKILL.md": the path "SKILL.md" appears twice`},
		{"folder and file", tarOf(t, skill, ent{name: "a/", typ: tar.TypeDir}, ent{name: "a", body: "1"}), `entry "a": the path "a" appears twice`},
		{"file under a file", tarOf(t, skill, ent{name: "a", body: "1"}, ent{name: "a/b", body: "2"}), `"a" is both a file and a folder`},
		{"invalid UTF-8 name", zipOf(t, skill, ent{name: "caf\xe9.md", body: "x"}), `entry "caf\xe9.md"`},
		{"backslash", zipOf(t, skill, ent{name: `a\b`, body: "x"}), `entry "a\\b"`},
		{"too many files", tarOf(t, many...), fmt.Sprintf("at most %d files", core.MaxSkillFiles)},
		{"too large", tarOf(t, skill, ent{name: "big", body: strings.Repeat("x", 1<<20)}), `entry "big": the files exceed 1048576 bytes`},
		{"zip bomb declaring a small size", zipBomb(t, 1024, 10), `entry "bomb.bin": its content does not match its header`},
		{"zip bomb declaring its size", zipBomb(t, 1024, 1<<30), `entry "bomb.bin": the files exceed 1048576 bytes`},
		{"tar.gz bomb", tarGzBomb(t, 1024), `entry "bomb.bin": the files exceed 1048576 bytes`},
		{"no SKILL.md", tarOf(t, ent{name: "README.md", body: "x"}), "no SKILL.md at the upload's root"},
		{"no SKILL.md in the folder", tarOf(t, ent{name: "d/README.md", body: "x"}), `no SKILL.md in the upload's folder "d"`},
		{"SKILL.md deeper", tarOf(t, ent{name: "x/SKILL.md", body: manifest}, ent{name: "y/z", body: "x"}), "no SKILL.md at the upload's root"},
		{"bad manifest", tarOf(t, ent{name: "SKILL.md", body: "---\nname: Bad Name\ndescription: d\n---\n"}), `field "name"`},
		{"manifest without description", zipOf(t, ent{name: "SKILL.md", body: "---\nname: ok\n---\n"}), `field "description" is required`},
		{"empty", nil, "the upload is empty"},
		{"unknown format", []byte("hello"), "neither a zip"},
		{"empty zip", zipOf(t), "holds no files"},
		{"corrupt gzip", []byte("\x1f\x8bnot gzip"), "gzip"},
		{"json unknown field", []byte(`{"files": {}, "name": "x"}`), `unknown field "name"`},
		{"json files twice", []byte(`{"files": {}, "files": {}}`), `field "files" appears twice`},
		{"json duplicate path", []byte(`{"files": {"a": "1", "a": "2"}}`), `entry "a": the path "a" appears twice`},
		{"json content not a string", []byte(`{"files": {"a": 1}}`), `files["a"]: want the file's content as a string`},
		{"json not an object", []byte(`{"files": []}`), `field "files" must be an object`},
		{"json trailing data", []byte(`{"files": {"SKILL.md": "x"}} {}`), "data after the JSON object"},
		{"json dot dot", []byte(`{"files": {"../x": "1"}}`), `entry "../x"`},
	}
}

func TestReadArchiveRefuses(t *testing.T) {
	for _, tt := range refusals(t) {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadArchive(tt.body, "", 1<<20)
			runtime.ReadMemStats(&after)
			if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.errHas)
			}
			// Every bomb inflates to 1 GiB; reading stops at the limit.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB reading the upload", alloc>>20)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tt := range []struct {
		body        []byte
		contentType string
		want        string
	}{
		{[]byte("PK\x03\x04rest"), "application/json", FormatZip},
		{[]byte("\x1f\x8brest"), "", FormatTarGz},
		{[]byte("anything"), "application/zip", FormatZip},
		{[]byte("anything"), "application/x-tar", FormatTar},
		{[]byte("anything"), "application/gzip", FormatTarGz},
		{[]byte("anything"), "application/json; charset=utf-8", FormatJSON},
	} {
		got, err := DetectFormat(tt.body, tt.contentType)
		if err != nil || got != tt.want {
			t.Errorf("DetectFormat(%q, %q) = %q, %v; want %q", tt.body, tt.contentType, got, err, tt.want)
		}
	}
}

// FuzzReadArchive: whatever the upload, ReadArchive refuses it with
// ErrInvalid or returns a skill within the limits.
func FuzzReadArchive(f *testing.F) {
	const max = 64 << 10
	for _, tt := range refusals(f) {
		if len(tt.body) < 1<<20 {
			f.Add(tt.body, "")
		}
	}
	f.Add(zipOf(f, ent{name: "d/SKILL.md", body: manifest}, ent{name: "d/x", body: "x", mode: 0o755}), "application/zip")
	f.Add(gz(f, tarOf(f, ent{name: "SKILL.md", body: manifest}, ent{name: "x/", typ: tar.TypeDir})), "application/gzip")
	f.Add([]byte(`{"files": {"SKILL.md": `+fmt.Sprintf("%q", manifest)+`}}`), "application/json")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		up, err := ReadArchive(body, contentType, max)
		if err != nil {
			if !errors.Is(err, core.ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		if len(up.Files) > core.MaxSkillFiles {
			t.Fatalf("%d files", len(up.Files))
		}
		total := 0
		for p, b := range up.Files {
			if err := core.ValidSkillPath(p); err != nil {
				t.Fatal(err)
			}
			total += len(b)
		}
		if total > max {
			t.Fatalf("%d bytes", total)
		}
		if _, err := ParseManifest(up.Files[core.SkillManifestFile]); err != nil {
			t.Fatalf("accepted a bad SKILL.md: %v", err)
		}
	})
}
