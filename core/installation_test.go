package core

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckPostChannel(t *testing.T) {
	tests := []struct {
		name    string
		policy  AccessPolicy
		channel string
		ok      bool
	}{
		{"no policy", AccessPolicy{}, "C1", true},
		{"users only", AccessPolicy{Users: []string{"U1"}}, "C1", true},
		{"a channel of the policy", AccessPolicy{Channels: []string{"C1", "C2"}}, "C2", true},
		{"a channel outside it", AccessPolicy{Channels: []string{"C1"}}, "C9", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Installation{ID: "ins_1", Policy: tc.policy}
			err := in.CheckPostChannel(tc.channel)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "channel policy") || !strings.Contains(err.Error(), tc.channel) {
				t.Fatalf("err = %v, want ErrInvalid naming the channel policy and %s", err, tc.channel)
			}
		})
	}
}
