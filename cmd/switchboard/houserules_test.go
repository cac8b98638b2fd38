package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/providers"
)

// The house rules, as tests: every package says what it owns; core/
// imports nothing of ours outside core/; a platform provider never imports
// another; nothing imports a package under cmd/.

const module = "github.com/switchboardhq/switchboard"

// pkg is what the rules read of one package directory.
type pkg struct {
	path    string   // import path
	doc     bool     // a non-test file has a package doc comment
	imports []string // imports of the module's own packages, by non-test files
	code    bool     // it has non-test files
}

// platformPackages are the provider packages that may not import each
// other: one per module.
func platformPackages() []string {
	var out []string
	for _, name := range providers.PlatformsOf(modules()).Names() {
		out = append(out, module+"/providers/"+name)
	}
	return out
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// houseRuleViolations lists what breaks the rules.
func houseRuleViolations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		if !p.code {
			continue
		}
		if !p.doc {
			out = append(out, fmt.Sprintf("%s: no package doc comment", p.path))
		}
		for _, imp := range p.imports {
			switch {
			case under(imp, module+"/cmd") && !under(p.path, module+"/cmd"):
				out = append(out, fmt.Sprintf("%s imports %s: nothing outside cmd/ imports cmd/", p.path, imp))
			case under(p.path, module+"/core") && !under(imp, module+"/core"):
				out = append(out, fmt.Sprintf("%s imports %s: core/ imports nothing of ours outside core/", p.path, imp))
			}
			platforms := platformPackages()
			for _, a := range platforms {
				for _, b := range platforms {
					if a != b && under(p.path, a) && under(imp, b) {
						out = append(out, fmt.Sprintf("%s imports %s: providers never import each other", p.path, imp))
					}
				}
			}
		}
	}
	return out
}

// readPackages parses the package clause and imports of every Go file of
// the module under root.
func readPackages(t *testing.T, root string) []pkg {
	t.Helper()
	byDir := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		p := byDir[dir]
		if p == nil {
			p = &pkg{path: strings.TrimSuffix(module+"/"+filepath.ToSlash(dir), "/.")}
			byDir[dir] = p
		}
		p.code = true
		p.doc = p.doc || (f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "")
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if under(imp, module) && !slices.Contains(p.imports, imp) {
				p.imports = append(p.imports, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []pkg
	for _, p := range byDir {
		out = append(out, *p)
	}
	return out
}

func TestHouseRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	pkgs := readPackages(t, root)
	if len(pkgs) < 30 {
		t.Fatalf("read %d packages; the walk missed the tree", len(pkgs))
	}
	for _, v := range houseRuleViolations(pkgs) {
		t.Error(v)
	}
}

// TestHouseRulesCatchViolations: each rule, broken on purpose, is caught.
func TestHouseRulesCatchViolations(t *testing.T) {
	tests := []struct {
		name string
		pkg  pkg
		want string
	}{
		{"no doc", pkg{path: module + "/sessions/x", code: true}, "no package doc comment"},
		{"core imports sessions", pkg{path: module + "/core/harness", doc: true, code: true, imports: []string{module + "/sessions"}}, "core/ imports nothing"},
		{"core imports providers", pkg{path: module + "/core", doc: true, code: true, imports: []string{module + "/providers/output"}}, "core/ imports nothing"},
		{"slack imports github", pkg{path: module + "/providers/slack", doc: true, code: true, imports: []string{module + "/providers/github"}}, "providers never import each other"},
		{"linear's subpackage imports slack", pkg{path: module + "/providers/linear/linearapi", doc: true, code: true, imports: []string{module + "/providers/slack"}}, "providers never import each other"},
		{"sandbox imports cmd", pkg{path: module + "/sandbox", doc: true, code: true, imports: []string{module + "/cmd/switchboard"}}, "nothing outside cmd/ imports cmd/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := houseRuleViolations([]pkg{tt.pkg})
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("violations %q, want one with %q", got, tt.want)
			}
		})
	}
	allowed := []pkg{
		{path: module + "/core/harness", doc: true, code: true, imports: []string{module + "/core", module + "/core/toolset"}},
		{path: module + "/providers/slack", doc: true, code: true, imports: []string{module + "/providers", module + "/providers/output", module + "/core"}},
		{path: module + "/cmd/switchboard/internal/x", doc: true, code: true, imports: []string{module + "/cmd/switchboard"}},
		{path: module + "/fixtures/only_tests"}, // no non-test files: no doc needed
	}
	if got := houseRuleViolations(allowed); len(got) != 0 {
		t.Fatalf("allowed imports flagged: %q", got)
	}
}
