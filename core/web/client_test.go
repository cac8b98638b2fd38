package web_test

import (
	"net/http/httptest"
	"testing"

	"github.com/switchboardhq/switchboard/core/web"
)

func TestClientOf(t *testing.T) {
	trusted, err := web.ParseTrustedProxies("10.0.0.5, 192.168.0.0/16, ::1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{name: "no proxy", peer: "203.0.113.7:4000", want: "203.0.113.7"},
		{name: "an untrusted peer's header is not believed", peer: "203.0.113.7:4000", xff: []string{"198.51.100.1"}, want: "203.0.113.7"},
		{name: "a trusted proxy", peer: "10.0.0.5:4000", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "a client's forged hop before the proxy's", peer: "10.0.0.5:4000", xff: []string{"1.2.3.4, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "a chain of trusted proxies", peer: "[::1]:4000", xff: []string{"198.51.100.1", "192.168.3.4"}, want: "198.51.100.1"},
		{name: "a trusted proxy without the header", peer: "10.0.0.5:4000", want: "10.0.0.5"},
		{name: "a hop that is no address", peer: "10.0.0.5:4000", xff: []string{"198.51.100.1, unknown"}, want: "10.0.0.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for _, h := range tc.xff {
				r.Header.Add("X-Forwarded-For", h)
			}
			if got := trusted.ClientOf(r); got != tc.want {
				t.Fatalf("client %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := web.ParseTrustedProxies("10.0.0.0/8, proxy.local"); err == nil {
		t.Fatal("a host name was taken for an address")
	}
}
