package sandbox

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestBuildFailure: the build script's exit status names the manager
// that failed and the packages it was installing, before its last lines.
func TestBuildFailure(t *testing.T) {
	pk := core.Packages{Apt: []string{"jq"}, Pip: []string{"requests", "nosuch"}, Gem: []string{"rake"}}
	tests := []struct {
		code int
		want string
	}{
		{exitManager + 1, "building the environment's image failed: pip could not install requests nosuch (exit 11):\nlast lines"},
		{exitManager + 5, "building the environment's image failed: gem could not install rake (exit 15):\nlast lines"},
		{1, "building the environment's image failed (exit 1):\nlast lines"},
		{exitManager + 6, "building the environment's image failed (exit 16):\nlast lines"},
	}
	for _, tt := range tests {
		if got := buildFailure(pk, tt.code, "last lines").Error(); got != tt.want {
			t.Errorf("exit %d: %q, want %q", tt.code, got, tt.want)
		}
	}
}

// TestRegistryEnv: each manager is pointed at its registry by what it
// reads; a plain-HTTP pip index is trusted, an HTTPS one need not be.
func TestRegistryEnv(t *testing.T) {
	tests := []struct {
		manager, url string
		want         []string
	}{
		{"pip", "http://10.0.0.1:8080/simple/", []string{"PIP_INDEX_URL=http://10.0.0.1:8080/simple/", "PIP_TRUSTED_HOST=10.0.0.1:8080"}},
		{"pip", "https://pypi.example.com/simple/", []string{"PIP_INDEX_URL=https://pypi.example.com/simple/"}},
		{"npm", "https://npm.example.com/", []string{"npm_config_registry=https://npm.example.com/"}},
		{"go", "https://go.example.com", []string{"GOPROXY=https://go.example.com", "GOSUMDB=off"}},
		{"cargo", "https://cargo.example.com/index/", []string{"SWITCHBOARD_CARGO_INDEX=sparse+https://cargo.example.com/index/"}},
		{"gem", "https://gems.example.com/", []string{"SWITCHBOARD_GEM_SOURCE=https://gems.example.com/"}},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := registryEnv(tt.manager, u); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: %q, want %q", tt.manager, tt.url, got, tt.want)
		}
	}
	script := buildScript("http://proxy:3128", []byte("PEM\n"))
	for _, want := range []string{"fail 11 \"pip could not install $pip\"", "go could not install $m", "SWITCHBOARD_CARGO_INDEX", "--source \"$SWITCHBOARD_GEM_SOURCE\""} {
		if !strings.Contains(script, want) {
			t.Errorf("the build script lacks %q", want)
		}
	}
}
