package webtools

import (
	"io"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// readable reduces an HTML document to text a model reads well: the
// title apart; headings, paragraphs, list items, table rows and
// preformatted blocks on lines of their own (headings as #, items as -,
// code fenced); links as [text](url), resolved against base (or the
// document's <base>); scripts, styles, forms' controls and other
// things a reader does not see, dropped.
func readable(r io.Reader, base *url.URL) (title, text string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", err
	}
	w := &textWriter{base: base}
	if b := find(doc, atom.Base); b != nil {
		if u, err := base.Parse(attr(b, "href")); err == nil && attr(b, "href") != "" {
			w.base = u
		}
	}
	if t := find(doc, atom.Title); t != nil {
		title = collapse(textOf(t))
	}
	if body := find(doc, atom.Body); body != nil {
		w.children(body)
	} else {
		w.children(doc)
	}
	return title, w.String(), nil
}

// skipped are elements whose content a reader never sees as text.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Select: true, atom.Textarea: true, atom.Input: true, atom.Button: true, atom.Img: true,
	atom.Audio: true, atom.Video: true, atom.Map: true,
}

// blocks are elements that stand on lines of their own, by the blank
// lines around them.
var blocks = map[atom.Atom]int{
	atom.P: 2, atom.Blockquote: 2, atom.Table: 2, atom.Ul: 2, atom.Ol: 2, atom.Dl: 2, atom.Figure: 2, atom.Hr: 2,
	atom.Div: 1, atom.Section: 1, atom.Article: 1, atom.Header: 1, atom.Footer: 1, atom.Main: 1, atom.Aside: 1,
	atom.Nav: 1, atom.Form: 1, atom.Address: 1, atom.Details: 1, atom.Summary: 1, atom.Figcaption: 1,
	atom.Dt: 1, atom.Dd: 1, atom.Tr: 1, atom.Caption: 1, atom.Fieldset: 1, atom.Legend: 1,
}

var headings = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

type textWriter struct {
	base  *url.URL
	b     strings.Builder
	nl    int  // line breaks owed before the next text
	space bool // a space owed before the next text
	pre   int  // depth of <pre>
	lists []int
}

func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// block owes n line breaks (at most two: one blank line).
func (w *textWriter) block(n int) {
	if w.b.Len() > 0 && n > w.nl {
		w.nl = n
	}
}

// write puts s after what is owed.
func (w *textWriter) write(s string) {
	if s == "" {
		return
	}
	if w.nl > 0 {
		w.b.WriteString(strings.Repeat("\n", w.nl))
		w.nl, w.space = 0, false
	} else if w.space && w.b.Len() > 0 {
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteString(s)
}

// words writes text with its runs of white space made one space.
func (w *textWriter) words(s string) {
	if s == "" {
		return
	}
	if isSpace(s[0]) {
		w.space = true
	}
	if c := collapse(s); c != "" {
		w.write(c)
	}
	if isSpace(s[len(s)-1]) {
		w.space = true
	}
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.write(n.Data)
			return
		}
		w.words(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	a := n.DataAtom
	if skipped[a] {
		return
	}
	switch {
	case a == atom.Br:
		w.b.WriteString(strings.Repeat("\n", max(w.nl, 1)))
		w.nl, w.space = 0, false
	case headings[a] > 0:
		w.block(2)
		w.write(strings.Repeat("#", headings[a]))
		w.space = true
		w.children(n)
		w.block(2)
	case a == atom.Pre:
		w.block(2)
		w.write("```")
		w.nl = 1
		w.pre++
		w.children(n)
		w.pre--
		w.nl = 1
		w.write("```")
		w.block(2)
	case a == atom.Ul || a == atom.Ol:
		// A list in a list item goes on the next line, no blank one.
		nl := blocks[a]
		if len(w.lists) > 0 {
			nl = 1
		}
		w.block(nl)
		first := 0
		if a == atom.Ol {
			first = 1
		}
		w.lists = append(w.lists, first)
		w.children(n)
		w.lists = w.lists[:len(w.lists)-1]
		w.block(nl)
	case a == atom.Li:
		w.block(1)
		w.write(w.bullet())
		w.space = true
		w.children(n)
		w.block(1)
	case a == atom.Td || a == atom.Th:
		if prev := previousElement(n); prev != nil && (prev.DataAtom == atom.Td || prev.DataAtom == atom.Th) {
			w.write("|")
			w.space = true
		}
		w.children(n)
		w.space = true
	case a == atom.A:
		w.link(n)
	case a == atom.Code && w.pre == 0:
		if t := collapse(textOf(n)); t != "" {
			w.write("`" + t + "`")
		}
	default:
		if nl, ok := blocks[a]; ok {
			w.block(nl)
			w.children(n)
			w.block(nl)
			return
		}
		w.children(n)
	}
}

// bullet marks a list item: - in a list, 1. 2. … in an ordered one,
// indented by the lists around it.
func (w *textWriter) bullet() string {
	if len(w.lists) == 0 {
		return "-"
	}
	indent := strings.Repeat("  ", len(w.lists)-1)
	last := &w.lists[len(w.lists)-1]
	if *last == 0 {
		return indent + "-"
	}
	s := indent + strconv.Itoa(*last) + "."
	*last++
	return s
}

// link writes an anchor as [text](url); one that leads nowhere a reader
// can follow is its text.
func (w *textWriter) link(n *html.Node) {
	text := collapse(textOf(n))
	if text == "" {
		if img := find(n, atom.Img); img != nil {
			text = collapse(attr(img, "alt"))
		}
	}
	href := strings.TrimSpace(attr(n, "href"))
	u, err := w.base.Parse(href)
	if href == "" || strings.HasPrefix(href, "#") || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		if text != "" {
			w.space = w.space || startsSpace(n)
			w.write(text)
		}
		return
	}
	if text == "" {
		return
	}
	w.space = w.space || startsSpace(n)
	w.write("[" + text + "](" + u.String() + ")")
	if endsSpace(n) {
		w.space = true
	}
}

func startsSpace(n *html.Node) bool {
	t := textOf(n)
	return t != "" && isSpace(t[0])
}

func endsSpace(n *html.Node) bool {
	t := textOf(n)
	return t != "" && isSpace(t[len(t)-1])
}

// textOf is the text under n, scripts and the like left out.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && skipped[n.DataAtom] {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// find is the first element a under n, depth first.
func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

func previousElement(n *html.Node) *html.Node {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode {
			return p
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
