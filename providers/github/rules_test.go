package github

import "testing"

func TestMentions(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"@sb-agent hi", true},
		{"hi @sb-agent.", true},
		{"hi @SB-Agent, please", true},
		{"(@sb-agent)", true},
		{"@sb-agent[bot] look", true},
		{"@sb-agent-two hi", false},
		{"mail me@sb-agent.example", false},
		{"sb-agent", false},
		{"`@sb-agentx`", false},
	}
	for _, tt := range tests {
		if got := mentions(tt.text, "sb-agent"); got != tt.want {
			t.Errorf("mentions(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key    string
		owner  string
		repo   string
		number int
		ok     bool
	}{
		{"github:o/r#1", "o", "r", 1, true},
		{"github:o/r.go#12", "o", "r.go", 12, true},
		{"github:o/r#0", "", "", 0, false},
		{"github:o#1", "", "", 0, false},
		{"slack:o/r#1", "", "", 0, false},
		{"github:/r#1", "", "", 0, false},
	}
	for _, tt := range tests {
		o, r, n, err := parseKey(tt.key)
		if (err == nil) != tt.ok || o != tt.owner || r != tt.repo || n != tt.number {
			t.Errorf("parseKey(%q) = %q %q %d %v", tt.key, o, r, n, err)
		}
		if tt.ok && sessionKey(o, r, n) != tt.key {
			t.Errorf("sessionKey round trip of %q", tt.key)
		}
	}
}
