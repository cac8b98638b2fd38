package github

import (
	"net/url"
	"testing"
)

func TestKeyOfURL(t *testing.T) {
	p := &Provider{cfg: Config{WebURL: "https://github.com"}}
	for _, tt := range []struct{ raw, want string }{
		{"https://github.com/acme/app/pull/7", "github:acme/app#7"},
		{"https://github.com/acme/app/pull/7/files#diff-1", "github:acme/app#7"},
		{"https://GitHub.com/acme/app/issues/12", "github:acme/app#12"},
		{"https://github.com/acme/app/commit/abc", ""},
		{"https://github.com/acme/app/pull/x", ""},
		{"https://gitlab.com/acme/app/pull/7", ""},
	} {
		u, _ := url.Parse(tt.raw)
		got, ok, err := p.KeyOfURL(t.Context(), u)
		if err != nil || got != tt.want || ok != (tt.want != "") {
			t.Errorf("KeyOfURL(%s) = %q, %v, %v; want %q", tt.raw, got, ok, err, tt.want)
		}
	}
	ghe := &Provider{cfg: Config{WebURL: "https://git.example.com/gh"}}
	u, _ := url.Parse("https://git.example.com/gh/acme/app/pull/3")
	if got, ok, _ := ghe.KeyOfURL(t.Context(), u); !ok || got != "github:acme/app#3" {
		t.Errorf("an Enterprise address: %q %v", got, ok)
	}
}
