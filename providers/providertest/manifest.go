package providertest

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// CheckDocumentedFields checks an app's manifest (as its JSON) against
// the fields its platform's documentation lists, written down in
// fixture: one dotted path a line (a list's items take no index),
// "required" after a field the documentation requires when its parent is
// present, and comments (#) of which one gives the documentation's
// address after "Source:". Every field of the manifest must be a
// documented one, every required one must be there when its parent is,
// and so must each of want.
func CheckDocumentedFields(t *testing.T, manifest any, fixture string, want ...string) {
	t.Helper()
	documented, required := readFields(t, fixture)
	raw, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	paths("", v, have)
	for p := range have {
		if !documented[p] {
			t.Errorf("the manifest's field %s is not among the documented ones (%s)", p, fixture)
		}
	}
	for _, p := range required {
		parent, _, nested := cutLast(p)
		if (!nested || have[parent]) && !have[p] {
			t.Errorf("the manifest lacks %s, which the documentation requires", p)
		}
	}
	for _, p := range want {
		if !documented[p] {
			t.Errorf("%s is not a documented field (%s)", p, fixture)
		}
		if !have[p] {
			t.Errorf("the manifest lacks %s", p)
		}
	}
}

// readFields reads a fixture of documented fields.
func readFields(t *testing.T, fixture string) (documented map[string]bool, required []string) {
	t.Helper()
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	documented = map[string]bool{}
	source := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if comment, ok := strings.CutPrefix(line, "#"); ok {
			if _, addr, found := strings.Cut(comment, "Source: "); found && strings.HasPrefix(addr, "https://") {
				source = true
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		documented[fields[0]] = true
		if slices.Contains(fields[1:], "required") {
			required = append(required, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !source || len(documented) == 0 {
		t.Fatalf("%s: want the documented fields and a comment naming their source (Source: https://…)", fixture)
	}
	return documented, required
}

// paths records the dotted path of every field of v under prefix.
func paths(prefix string, v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			into[p] = true
			paths(p, item, into)
		}
	case []any:
		for _, item := range v {
			paths(prefix, item, into)
		}
	}
}

// cutLast splits a dotted path at its last dot.
func cutLast(p string) (parent, name string, ok bool) {
	i := strings.LastIndex(p, ".")
	if i < 0 {
		return "", p, false
	}
	return p[:i], p[i+1:], true
}

// StringConstants are the values of the string constants of file whose
// names start with prefix: what a provider acts on, read from its source
// so that a new one fails the test comparing them with what its app's
// manifest declares until the manifest declares it too.
func StringConstants(t *testing.T, file, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) || !strings.HasPrefix(name.Name, prefix) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no string constant named %s…", file, prefix)
	}
	return out
}
