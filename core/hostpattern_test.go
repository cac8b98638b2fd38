package core_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"api.example.com", "api.example.com"},
		{"API.Example.COM.", "api.example.com"},
		{"api.example.com:8443", "api.example.com:8443"},
		{"*.example.com", "*.example.com"},
		{"*.Example.com:443", "*.example.com:443"},
		{"localhost", "localhost"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"::1", "[::1]"},
		{"[::1]", "[::1]"},
		{"[::1]:8080", "[::1]:8080"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80"},
		{"", ""},
		{"*", ""},
		{"*.com", ""},
		{"a.*.example.com", ""},
		{"https://example.com", ""},
		{"example.com/path", ""},
		{"user@example.com", ""},
		{"example.com:0", ""},
		{"example.com:65536", ""},
		{"example.com:08", ""},
		{"example.com:", ""},
		{"-bad.example.com", ""},
		{"bad-.example.com", ""},
		{"under_score.example.com", ""},
		{"a..b", ""},
		{"exa mple.com", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := core.ParseHostPattern(tc.in, true)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("accepted as %q", p.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tc.want {
				t.Fatalf("= %q, want %q", p.String(), tc.want)
			}
		})
	}
}

func TestHostAllowed(t *testing.T) {
	hosts := []string{"api.example.com", "*.svc.example.org", "pinned.example.net:8443", "127.0.0.1:9000", "[::1]:9001"}
	tests := []struct {
		host string
		want bool
	}{
		{"api.example.com", true},
		{"API.example.com", true},
		{"api.example.com:443", true}, // no port in the binding: any port
		{"api.example.com.", true},
		{"example.com", false},
		{"evil-api.example.com", false},
		{"api.example.com.evil.net", false},
		{"x.api.example.com", false},
		{"a.svc.example.org", true},
		{"a.b.svc.example.org:8080", true},
		{"svc.example.org", false}, // the wildcard is for subdomains only
		{"asvc.example.org", false},
		{"pinned.example.net:8443", true},
		{"pinned.example.net", false},
		{"pinned.example.net:443", false},
		{"127.0.0.1:9000", true},
		{"127.0.0.1:9001", false},
		{"127.0.0.1", false},
		{"[::1]:9001", true},
		{"[0:0::1]:9001", true},
		{"*.svc.example.org", false}, // a request is never to a wildcard
		{"", false},
		{"api.example.com/x", false},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			if got := core.MatchHost(hosts, tc.host); got != tc.want {
				t.Fatalf("MatchHost(%q) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}
