// Package docs holds the documentation's pages and pictures, embedded in
// the binary so that the gateway serves them itself at /docs/ (see
// console.md), as the version of the docs that matches the running code.
package docs

import (
	"embed"
	"io/fs"
)

//go:embed *.md images
var files embed.FS

// Files are the pages (name.md, at the root) and their pictures
// (images/).
func Files() fs.FS { return files }
