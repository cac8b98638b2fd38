package sandbox

import (
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	cases := []struct {
		name    string
		max     int
		writes  []string
		want    string
		omitted int64
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", 0},
		{"exactly the cap", 10, []string{"0123456789"}, "0123456789", 0},
		{"one big write", 10, []string{"0123456789abcdef"}, "01234\n[… 6 bytes omitted …]\nbcdef", 6},
		{"many small writes", 4, strings.Split("abcdefghij", ""), "ab\n[… 6 bytes omitted …]\nij", 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := newCapture(c.max)
			for _, w := range c.writes {
				if n, err := cp.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("write %q: %d, %v", w, n, err)
				}
			}
			got, omitted := cp.result()
			if string(got) != c.want || omitted != c.omitted {
				t.Fatalf("got %q (%d omitted), want %q (%d)", got, omitted, c.want, c.omitted)
			}
		})
	}
}
