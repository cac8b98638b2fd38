package console

import (
	"bytes"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// docsRoot is the console's address from a documentation page: the pages
// are all one level under /docs/.
const docsRoot = "../console/"

// markdown renders the documentation: GitHub's tables and autolinks, ids
// on headings for the pages' #anchors, and the pages' own HTML (pictures
// with a width), which is the binary's and not a visitor's.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID(), parser.WithASTTransformers(util.Prioritized(outsideLinks{}, 100))),
	goldmark.WithRendererOptions(html.WithUnsafe()),
)

// docPage is a documentation page as the console's frame shows it.
type docPage struct {
	Name  string
	Title string
	HTML  template.HTML
	// Pages list every page, for the index (Name empty).
	Pages []docEntry
}

type docEntry struct{ Name, Title string }

// RegisterDocs serves pages (name.md and images/) under /docs/, in the
// open, in the console's frame and under its Content-Security-Policy:
// each page at /docs/<name>.md, so that the links between pages hold as
// written, its pictures at /docs/images/, and a list of the pages at
// /docs/.
func (h *Handler) RegisterDocs(mux *http.ServeMux, pages fs.FS) {
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) { seeOther(w, "docs/") })
	mux.HandleFunc("GET /docs/{$}", func(w http.ResponseWriter, r *http.Request) {
		names, _ := fs.Glob(pages, "*.md")
		p := docPage{Title: "Documentation"}
		for _, n := range names {
			raw, err := fs.ReadFile(pages, n)
			if err != nil {
				h.log.Error("docs: read", "page", n, "err", err)
				continue
			}
			p.Pages = append(p.Pages, docEntry{Name: n, Title: docTitle(raw, n)})
		}
		slices.SortFunc(p.Pages, func(a, b docEntry) int { return strings.Compare(a.Title, b.Title) })
		h.render(w, r, http.StatusOK, "doc", layout{Title: p.Title, Root: docsRoot, Page: p})
	})
	mux.HandleFunc("GET /docs/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		raw, err := fs.ReadFile(pages, name)
		if path.Ext(name) != ".md" || err != nil {
			h.render(w, r, http.StatusNotFound, "message", layout{Title: "Not found", Root: docsRoot,
				Page: messagePage{"Not found", "There is no documentation page " + name + ". The list of pages is at /docs/.", docsRoot}})
			return
		}
		var out bytes.Buffer
		if err := markdown.Convert(raw, &out); err != nil {
			h.log.Error("docs: render", "page", name, "err", err)
			plainError(w)
			return
		}
		// The page is the binary's own Markdown, rendered by goldmark.
		p := docPage{Name: name, Title: docTitle(raw, name), HTML: template.HTML(out.String())}
		h.render(w, r, http.StatusOK, "doc", layout{Title: p.Title, Root: docsRoot, Page: p})
	})
	mux.HandleFunc("GET /docs/images/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := "images/" + r.PathValue("name")
		if _, err := fs.Stat(pages, name); err != nil {
			http.NotFound(w, r)
			return
		}
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "public, max-age=3600")
		http.ServeFileFS(w, r, pages, name)
	})
}

// docTitle is a page's first heading, else its name.
func docTitle(raw []byte, name string) string {
	for line := range strings.Lines(string(raw)) {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return strings.TrimSuffix(name, ".md")
}

// outsideLinks unlinks what a page links outside the documentation
// (../deploy/…, a file of the repository): the gateway does not serve it,
// so the page names the path as code instead of a link that finds
// nothing.
type outsideLinks struct{}

func (outsideLinks) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var outside []*ast.Link
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering && strings.HasPrefix(string(l.Destination), "../") {
			outside = append(outside, l)
		}
		return ast.WalkContinue, nil
	})
	for _, l := range outside {
		parent := l.Parent()
		for c := l.FirstChild(); c != nil; c = l.FirstChild() {
			l.RemoveChild(l, c)
			parent.InsertBefore(parent, l, c)
		}
		note := ast.NewString([]byte(" (" + strings.TrimPrefix(string(l.Destination), "../") + " in the source repository)"))
		parent.ReplaceChild(parent, l, note)
	}
}
