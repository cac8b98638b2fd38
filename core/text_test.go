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
