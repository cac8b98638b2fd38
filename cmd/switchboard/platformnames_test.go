package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/providers"
)

// A platform is one package under providers/ plus its row in modules():
// everything else learns of it through providers.Platform. So no string
// literal outside its package names it. Besides the platforms' own
// packages, two folders are made of the platforms by design: fixtures/
// (their fakes) and playground/, the simulator built from those fakes;
// and cmd/soak, which drives the gateway with their webhooks as traffic.
// Test files may name them.

// platformNameExempt are the folders, besides providers/<name>/, whose
// code may name a platform.
var platformNameExempt = []string{"fixtures", "playground", "cmd/soak"}

// platformNamePattern matches a platform's name as a word, in any case
// ("slack", "Slack", "SLACK_", "/webhooks/slack").
func platformNamePattern(names []string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^a-z])(` + strings.Join(names, "|") + `)([^a-z]|$)`)
}

// platformLiterals lists the string literals of one Go file (imports
// aside) that name a platform, as "file:line: literal".
func platformLiterals(name string, src []byte, re *regexp.Regexp) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BasicLit:
			if n.Kind == token.STRING && re.MatchString(n.Value) {
				lit := n.Value
				if len(lit) > 80 {
					lit = lit[:80] + "…"
				}
				out = append(out, fmt.Sprintf("%s:%d: %s", name, fset.Position(n.Pos()).Line, lit))
			}
		}
		return true
	})
	return out, nil
}

// platformNameViolations walks the module's non-test Go files outside the
// exempt folders.
func platformNameViolations(t *testing.T, root string, names []string) []string {
	t.Helper()
	exempt := append([]string{}, platformNameExempt...)
	for _, n := range names {
		exempt = append(exempt, "providers/"+n)
	}
	re := platformNamePattern(names)
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			for _, e := range exempt {
				if rel == e {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := platformLiterals(rel, src, re)
		out = append(out, found...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlatformNamesStayInTheirPackages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	names := providers.PlatformsOf(modules()).Names()
	if len(names) < 3 {
		t.Fatalf("platforms %v: the module list lost some", names)
	}
	for _, v := range platformNameViolations(t, root, names) {
		t.Errorf("%s: a platform is named outside its package; describe it in its providers.Platform instead", v)
	}
}

// TestPlatformNamesPlanted: a literal naming a platform is caught, in any
// case and inside a longer string; comments, imports and words that
// merely contain a name are not.
func TestPlatformNamesPlanted(t *testing.T) {
	re := platformNamePattern(providers.PlatformsOf(modules()).Names())
	tests := []struct {
		name, src string
		want      int
	}{
		{"a bare name", `var p = "slack"`, 1},
		{"a label", `var l = "Linear issue"`, 1},
		{"a setting prefix", "var s = []string{\"GITHUB_APP_\"}", 1},
		{"an endpoint", "func f() { g(`/webhooks/github`) }", 1},
		{"a key", `const k = "slack:T1:C1:1.2"`, 1},
		{"in a comment", "// slack, github and linear\nvar x = 1", 0},
		{"an import", "import _ \"github.com/x/y\"", 0},
		{"inside a word", `var w = "slackline nonlinear"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := platformLiterals("planted.go", []byte("package x\n"+tt.src+"\n"), re)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Fatalf("found %q, want %d", got, tt.want)
			}
		})
	}
}

// TestShippedPlatformKeys: the origin keys each shipped platform declares
// (links are checked against them before they reach the store, which
// knows only the shape every key has).
func TestShippedPlatformKeys(t *testing.T) {
	platforms := providers.PlatformsOf(modules())
	for key, want := range map[string]string{"github:acme/app#7": "github", "slack:T1:C1:1700000000.000100": "slack", "linear:org1:as-1": "linear"} {
		if got, err := platforms.CheckKey(key); err != nil || got != want {
			t.Errorf("CheckKey(%q) = %q, %v; want %s", key, got, err, want)
		}
	}
	for _, key := range []string{"", "github:acme", "slack:T1", "jira:X-1", "github:acme/app#0", "slack:t1:c1:1.2", "linear:org 1:as-1"} {
		if _, err := platforms.CheckKey(key); err == nil {
			t.Errorf("CheckKey(%q) passed", key)
		}
	}
}
