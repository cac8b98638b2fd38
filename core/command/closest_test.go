package command

import (
	"flag"
	"testing"
)

func TestEdits(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "abc", 0}, {"MODLE", "MODEL", 2}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := edits(tt.a, tt.b); got != tt.want {
			t.Errorf("edits(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"serve", "session", "skill", "schedule", "version"}
	for _, tt := range []struct{ name, want string }{
		{"sesion", "session"},
		{"serv", "serve"},
		{"verison", "version"},
		{"frobnicate", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Suggest(tt.name, known); got != tt.want {
				t.Fatalf("Suggest(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
	if got := Closest("x", nil); got != "" {
		t.Fatalf("Closest of nothing = %q", got)
	}
}

func TestFlagUsage(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("agent", "default", "agent `NAME` or id")
	fs.Bool("json", false, "print JSON")
	fs.Int("limit", 0, "at most this many")
	want := "" +
		"  --agent NAME\n      agent NAME or id (default \"default\")\n" +
		"  --json\n      print JSON\n" +
		"  --limit INT\n      at most this many\n"
	if got := FlagUsage(fs); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
