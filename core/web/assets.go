package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"
)

// Assets are the static files a browser page loads (its script, style
// sheet, icon), read once from an embedded tree and served by name.
type Assets map[string]asset

type asset struct {
	body        []byte
	etag        string
	contentType string
}

// LoadAssets reads every file under dir of fsys, keyed by base name.
func LoadAssets(fsys fs.FS, dir string) (Assets, error) {
	out := Assets{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[path.Base(p)] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, contentType: ct}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load assets: %w", err)
	}
	return out, nil
}

// Serve writes the asset name and reports whether there is one; the
// caller sets its own security headers first and answers a miss.
func (a Assets) Serve(w http.ResponseWriter, r *http.Request, name string) bool {
	f, ok := a[name]
	if !ok {
		return false
	}
	hdr := w.Header()
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("ETag", f.etag)
	// Revalidate every time: cheap with the ETag, and a new release's
	// script is picked up at once.
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	return true
}
