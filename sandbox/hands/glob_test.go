package hands

import "testing"

func TestCompileGlob(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"*.go", []string{"a.go", "main.go"}, []string{"x/a.go", "a.go.txt", "a.gox"}},
		{"**/*.go", []string{"a.go", "x/a.go", "x/y/z.go"}, []string{"a.txt", "x/a.gox"}},
		{"src/**", []string{"src/a", "src/b/c.ts"}, []string{"srcx/a", "a/src/b"}},
		{"src/**/test_*.py", []string{"src/test_a.py", "src/x/y/test_b.py"}, []string{"src/x/atest_b.py"}},
		{"*.{ts,tsx}", []string{"a.ts", "b.tsx"}, []string{"c.t", "d.tsxx"}},
		{"file?.txt", []string{"file1.txt"}, []string{"file10.txt", "file/.txt"}},
		{"[ab]*.md", []string{"a.md", "bz.md"}, []string{"c.md"}},
		{"[!ab]*.md", []string{"c.md"}, []string{"a.md"}},
		{"notes (1).txt", []string{"notes (1).txt"}, []string{"notes 1.txt"}},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			m, err := compileGlob(c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.match {
				if !m(p) {
					t.Errorf("%q should match %q", c.pattern, p)
				}
			}
			for _, p := range c.miss {
				if m(p) {
					t.Errorf("%q should not match %q", c.pattern, p)
				}
			}
		})
	}
	for _, bad := range []string{"", "[ab", "{a,b", "a}"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("pattern %q: want an error", bad)
		}
	}
}
