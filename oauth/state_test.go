package oauth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStates(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	base, err := NewStates(testKey, &memOnce{})
	if err != nil {
		t.Fatal(err)
	}
	s := base.WithClock(clock, 10*time.Minute)
	other, err := NewStates("another master key of some length", &memOnce{})
	if err != nil {
		t.Fatal(err)
	}
	issue := func(st *States, p string) string {
		v, err := st.Issue(p)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	good := issue(s, "slack")
	tests := []struct {
		name     string
		provider string
		state    string
		advance  time.Duration
		ok       bool
	}{
		{"valid", "slack", good, 0, true},
		{"replayed", "slack", good, 0, false},
		{"other provider", "github", issue(s, "slack"), 0, false},
		{"expired", "slack", issue(s, "slack"), 11 * time.Minute, false},
		{"forged by another key", "slack", issue(other.WithClock(clock, time.Hour), "slack"), 0, false},
		{"tampered", "slack", "x" + issue(s, "slack")[1:], 0, false},
		{"malformed", "slack", "not-a-state", 0, false},
		{"empty", "slack", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now = time.Unix(1_700_000_000, 0).Add(tc.advance)
			err := s.Redeem(t.Context(), tc.provider, tc.state)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadState)) {
				t.Fatalf("redeem: %v", err)
			}
		})
	}
	if strings.Contains(good, testKey) {
		t.Fatal("the state carries the key")
	}
}
