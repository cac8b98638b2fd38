package memory

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestChunks(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	long := strings.Repeat("é", 700)       // 1400 bytes, no line end
	tests := []struct {
		name    string
		content string
		want    []span
	}{
		{"empty", "", nil},
		{"one short line", "hello", []span{{0, 5}}},
		{"cut at the last line end that fits", strings.Repeat(line, 25), []span{{0, 1000}, {1000, 2000}, {2000, 2500}}},
		{"a line longer than a chunk is cut at a rune boundary", long, []span{{0, 1000}, {1000, 1400}}},
		{"a line end after the limit does not count", "ab\n" + strings.Repeat("y", 1200), []span{{0, 3}, {3, 1003}, {1003, 1203}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunks(tt.content)
			if len(got) != len(tt.want) {
				t.Fatalf("chunks %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("chunks %v, want %v", got, tt.want)
				}
				if !utf8.ValidString(tt.content[got[i].start:got[i].end]) {
					t.Fatalf("chunk %d cuts a rune", i)
				}
			}
		})
	}
}

func TestHoldsWords(t *testing.T) {
	tests := []struct {
		text, phrase string
		want         bool
	}{
		{"We ship on Fridays", "ship", true},
		{"a good relationship", "ship", false},
		{"relationship, then ship", "ship", true},
		{"Ticket INC-4521 was the pager", "inc-4521", true},
		{"release\n  train", "release train", true},
		{"", "x", false},
		{"ship", "ship", true},
	}
	for _, tt := range tests {
		if got := holdsWords(tt.text, tt.phrase); got != tt.want {
			t.Errorf("holdsWords(%q, %q) = %v", tt.text, tt.phrase, got)
		}
	}
}
