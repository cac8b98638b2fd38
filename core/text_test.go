package core

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	tests := []struct {
		name, v string
		ok      bool
	}{
		{"empty", "", true},
		{"ascii", "slack:T1:C1:1.2", true},
		{"unicode", "tenant ü ✓", true},
		{"nul", "a\x00b", false},
		{"invalid_utf8", "a\xffb", false},
		{"cut_rune", "\xe2\x9c", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckText("tenant", tc.v)
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckText(%q) = %v, want nil", tc.v, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "tenant ") {
				t.Fatalf("CheckText(%q) = %v, want ErrInvalid naming tenant", tc.v, err)
			}
		})
	}
}

// TestClip: a cell's text is one line, cut to n characters (not bytes)
// with "…"; text that fits is kept.
func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"fits", 10, "fits"},
		{"  two\n\tlines  ", 10, "two lines"},
		{"exactly10!", 10, "exactly10!"},
		{"one too many", 11, "one too man…"},
		{"héllo wörld", 5, "héllo…"},
		{"", 5, ""},
		{"red \x1b[31malert\x1b[0m\a done", 40, "red [31malert[0m done"},
		{"bidi \u202eevil", 20, "bidi evil"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Clip(tt.in, tt.n); got != tt.want {
				t.Fatalf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}
