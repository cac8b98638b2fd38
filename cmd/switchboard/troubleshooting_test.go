package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTroubleshootingCoversStartupErrors: every error message the start-up
// checks can print has an entry in docs/troubleshooting.md, a heading
// that quotes it (its verbs filled with an example), followed by the fix.
// The messages are read from the source, not listed here: the checks are
// every function that reads settings (a settings.Values parameter), serve
// and loadServeConfig, and what they call, in their package and, from
// serve, across the module's packages (the store, the sandbox, the
// providers). A new error in any of them fails this test until the page
// has its entry. The install flows' error pages (oauth.Page) are held to
// the same.
func TestTroubleshootingCoversStartupErrors(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := docEntries(t, string(doc))
	msgs := startupMessages(t, root)
	if len(msgs) < 50 {
		t.Fatalf("found only %d start-up messages: the walk of the checks is broken", len(msgs))
	}
	for _, m := range msgs {
		if !slices.ContainsFunc(entries, m.re.MatchString) {
			t.Errorf("%s: %q has no entry in docs/troubleshooting.md (a bullet opening with it, e.g. - `%s`: the fix)", m.pos, m.format, m.example())
		}
	}
}

// TestTroubleshootingMatchesMessages: the matching the test above relies
// on finds what it should and only that.
func TestTroubleshootingMatchesMessages(t *testing.T) {
	tests := []struct {
		format, entry string
		want          bool
	}{
		{`%s=%q: want a whole number ≥ %d`, `SWITCHBOARD_WORKERS="many": want a whole number ≥ 1`, true},
		{`%s=%q: want a whole number ≥ %d`, `SWITCHBOARD_WORKERS="many": want a number from 0 to 1`, false},
		{`SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID`, `SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID`, true},
		{`SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID`, `SLACK_CLIENT_ID is required with SLACK_CLIENT_SECRET`, false},
		{`SLACK_BOT_TOKEN: %w`, `SLACK_BOT_TOKEN: invalid_auth`, true},
		{`100%% sure: %v`, `100% sure: yes`, true},
	}
	for _, tt := range tests {
		t.Run(tt.format+"|"+tt.entry, func(t *testing.T) {
			if got := messageRegexp(tt.format).MatchString(tt.entry); got != tt.want {
				t.Errorf("match = %v, want %v", got, tt.want)
			}
		})
	}
	if meaningful(`%s: %w`) || meaningful(`%w`) || !meaningful(`read %s: %w`) {
		t.Error("pure wrappers must be left out, messages with words kept")
	}
	entries := docEntries(t, "# Title\n\n### `a: b`\n\nFix it.\n\n### `c`\n### `d`\n\nFix.\n\n- `e`, `f`: fix them.\n- `g`\n- see `h`: no.\n")
	if !slices.Equal(entries, []string{"a: b", "d", "e", "f"}) {
		t.Errorf("entries = %q, want the headings followed by a fix", entries)
	}
}

// moduleRoot is the directory of go.mod, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// docEntries are the messages the page has an entry for: the code spans
// of a heading that a paragraph (the fix) follows, and the code spans
// that open a bullet, before its fix.
func docEntries(t *testing.T, doc string) []string {
	t.Helper()
	span := regexp.MustCompile("`([^`]+)`")
	lead := regexp.MustCompile("^(?:`[^`]+`(?:, | or )?)+")
	lines := strings.Split(doc, "\n")
	var out []string
	for i, line := range lines {
		if rest, ok := strings.CutPrefix(line, "- "); ok {
			spans := lead.FindString(rest)
			if spans != "" && meaningful(rest[len(spans):]) {
				for _, m := range span.FindAllStringSubmatch(spans, -1) {
					out = append(out, m[1])
				}
			}
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || strings.HasPrefix(lines[j], "#") {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// message is an error message found in the source.
type message struct {
	pos    string
	format string
	re     *regexp.Regexp
}

// verb is a fmt verb of a format.
var verb = regexp.MustCompile(`%[-+# 0-9.*\[\]]*[a-zA-Z%]`)

// example is the format with its verbs shown as placeholders.
func (m message) example() string {
	return verb.ReplaceAllStringFunc(m.format, func(v string) string {
		if v == "%%" {
			return "%"
		}
		return "…"
	})
}

// messageRegexp matches a message printed from format, each verb standing
// for any text.
func messageRegexp(format string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range verb.FindAllStringIndex(format, -1) {
		b.WriteString(regexp.QuoteMeta(format[last:loc[0]]))
		if format[loc[0]:loc[1]] == "%%" {
			b.WriteString("%")
		} else {
			b.WriteString(".+")
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(format[last:]) + "$")
	return regexp.MustCompile(b.String())
}

// meaningful reports whether a format says something of its own, beyond
// wrapping another error (a word of three letters or more).
func meaningful(format string) bool {
	return regexp.MustCompile(`\pL{3,}`).MatchString(verb.ReplaceAllString(format, " "))
}

// startupDepth is how deep into the module's other packages the walk
// follows serve: the store's Open reaches bolt's and PostgreSQL's, whose
// own errors (a locked file, a newer schema) are start-up errors too.
const startupDepth = 2

// pkgSource is one package's parsed non-test files.
type pkgSource struct {
	path    string // import path
	files   []*ast.File
	funcs   map[string][]*ast.FuncDecl // by name; methods too
	imports map[*ast.File]map[string]string
}

// startupMessages reads the module's source and returns the messages of
// the start-up checks (see TestTroubleshootingCoversStartupErrors).
func startupMessages(t *testing.T, root string) []message {
	t.Helper()
	modPath := modulePath(t, root)
	fset := token.NewFileSet()
	pkgs := map[string]*pkgSource{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ip := modPath
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkgSource{path: ip, funcs: map[string][]*ast.FuncDecl{}, imports: map[*ast.File]map[string]string{}}
			pkgs[ip] = p
		}
		p.files = append(p.files, f)
		imps := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imps[name] = path
		}
		p.imports[f] = imps
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				p.funcs[fd.Name.Name] = append(p.funcs[fd.Name.Name], fd)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fileOf := map[*ast.FuncDecl]*ast.File{}
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					fileOf[fd] = f
				}
			}
		}
	}

	type fn struct {
		pkg  *pkgSource
		decl *ast.FuncDecl
		// across: how many more calls into other packages of the module
		// are followed (from serve's path, not from every settings reader).
		across int
	}
	var queue []fn
	// A function is walked again when reached with more depth left, and
	// its messages taken once.
	depth := map[*ast.FuncDecl]int{}
	push := func(p *pkgSource, d *ast.FuncDecl, across int) {
		if had, ok := depth[d]; !ok || across > had {
			depth[d] = across
			queue = append(queue, fn{p, d, across})
		}
	}
	settingsPath := modPath + "/core/settings"
	for _, p := range pkgs {
		for _, decls := range p.funcs {
			for _, d := range decls {
				if readsSettings(d, p.path == settingsPath, p.imports[fileOf[d]], settingsPath) {
					push(p, d, 0)
				}
			}
		}
	}
	main := pkgs[modPath+"/cmd/switchboard"]
	for _, name := range []string{"serve", "loadServeConfig"} {
		for _, d := range main.funcs[name] {
			push(main, d, startupDepth)
		}
	}

	var msgs []message
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		imps := cur.pkg.imports[fileOf[cur.decl]]
		ast.Inspect(cur.decl.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch f := call.Fun.(type) {
			case *ast.Ident:
				for _, d := range cur.pkg.funcs[f.Name] {
					push(cur.pkg, d, cur.across)
				}
			case *ast.SelectorExpr:
				x, isIdent := f.X.(*ast.Ident)
				if ip, ok := imps[identName(x, isIdent)]; ok {
					if ip == "fmt" && f.Sel.Name == "Errorf" || ip == "errors" && f.Sel.Name == "New" {
						if format, ok := literal(call.Args); ok && meaningful(format) {
							msgs = append(msgs, message{pos: fset.Position(call.Pos()).String(), format: format, re: messageRegexp(format)})
						}
					}
					if p := pkgs[ip]; p != nil && cur.across > 0 {
						for _, d := range p.funcs[f.Sel.Name] {
							push(p, d, cur.across-1)
						}
					}
					return true
				}
			}
			return true
		})
	}
	// Every install page, wherever it is written: an install fails in a
	// browser, after the start.
	oauthPath := modPath + "/oauth"
	for _, p := range pkgs {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 4 || isOK(call.Args[1]) {
					return true
				}
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					ok = p.path == oauthPath && fun.Name == "Page"
				case *ast.SelectorExpr:
					x, isIdent := fun.X.(*ast.Ident)
					ok = p.imports[f][identName(x, isIdent)] == oauthPath && fun.Sel.Name == "Page"
				}
				if text, lit := literal(call.Args[3:]); ok && lit {
					msgs = append(msgs, message{pos: fset.Position(call.Pos()).String(), format: text, re: messageRegexp(text)})
				}
				return true
			})
		}
	}
	slices.SortFunc(msgs, func(a, b message) int { return strings.Compare(a.pos, b.pos) })
	return slices.CompactFunc(msgs, func(a, b message) bool { return a.pos == b.pos })
}

func identName(x *ast.Ident, ok bool) string {
	if !ok {
		return ""
	}
	return x.Name
}

// literal is the first argument when it is a string literal, or a sum of
// them.
func literal(args []ast.Expr) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	var s strings.Builder
	var walk func(e ast.Expr) bool
	walk = func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.BasicLit:
			v, err := strconv.Unquote(e.Value)
			s.WriteString(v)
			return err == nil && e.Kind == token.STRING
		case *ast.BinaryExpr:
			return e.Op == token.ADD && walk(e.X) && walk(e.Y)
		case *ast.ParenExpr:
			return walk(e.X)
		}
		return false
	}
	ok := walk(args[0])
	return s.String(), ok
}

// isOK reports whether a status argument is http.StatusOK.
func isOK(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "StatusOK"
}

// readsSettings reports whether a function takes settings.Values (or is a
// method of it, in package settings).
func readsSettings(d *ast.FuncDecl, inSettings bool, imps map[string]string, settingsPath string) bool {
	isValues := func(e ast.Expr) bool {
		if st, ok := e.(*ast.StarExpr); ok {
			e = st.X
		}
		switch e := e.(type) {
		case *ast.Ident:
			return inSettings && e.Name == "Values"
		case *ast.SelectorExpr:
			x, ok := e.X.(*ast.Ident)
			return ok && imps[x.Name] == settingsPath && e.Sel.Name == "Values"
		}
		return false
	}
	var fields []*ast.Field
	if d.Recv != nil {
		fields = append(fields, d.Recv.List...)
	}
	fields = append(fields, d.Type.Params.List...)
	return slices.ContainsFunc(fields, func(f *ast.Field) bool { return isValues(f.Type) })
}

// modulePath is go.mod's module line.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}
