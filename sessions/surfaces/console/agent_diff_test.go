package console

import (
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"same", "x y", "x y", "=x =y"},
		{"added at the end", "x", "x y", "=x +y"},
		{"removed in the middle", "x y z", "x z", "=x -y =z"},
		{"changed line", "x y z", "x Y z", "=x -y +Y =z"},
		{"from nothing", "", "x y", "+x +y"},
		{"to nothing", "x y", "", "-x -y"},
		{"moved line keeps the longest run", "a b c d", "b c d a", "-a =b =c =d +a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range lineDiff(strings.Fields(tc.a), strings.Fields(tc.b)) {
				got = append(got, map[string]string{"same": "=", "add": "+", "del": "-"}[l.Op]+l.Text)
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("%q", got)
			}
		})
	}
}
