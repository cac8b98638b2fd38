package gitlab

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/switchboardhq/switchboard/core/netguard"
)

// TestPrivateHostsAllowedByName: the instance's host and the hosts the
// operator named are reached at a private address (here loopback); any
// other host at one is refused, whatever GitLab sends the gateway to.
func TestPrivateHostsAllowedByName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	tests := []struct {
		name, instance, target string
		allowed                []string
		refused                bool
	}{
		{"the instance's host", "127.0.0.1", "http://127.0.0.1:" + port + "/api/v4/user", nil, false},
		{"a named host", "gitlab.example.com", "http://localhost:" + port + "/objects/1", []string{"LOCALHOST"}, false},
		{"a host nobody named", "gitlab.example.com", "http://localhost:" + port + "/objects/1", []string{"minio.internal"}, true},
		{"a redirect to an unnamed private host", "127.0.0.1", "http://127.0.0.1:" + port + "/redirect?to=" + url.QueryEscape("http://localhost:"+port+"/x"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &http.Client{Transport: guardedTransport(tt.instance, tt.allowed)}
			resp, err := c.Get(tt.target)
			if tt.refused {
				if !errors.Is(err, netguard.ErrRefusedAddress) {
					t.Fatalf("got %v, want a refused address", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		})
	}
	// A provider's client without a transport of its own gets the guard;
	// one with its own transport (a test's, a proxy's) keeps it.
	p, err := New(Config{URL: "https://gitlab.example.com", WebhookSecret: testHookSecret, Token: "glpat-x", Project: "acme/app"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.cfg.HTTPClient.Transport.(*http.Transport); !ok {
		t.Errorf("the default client's transport is %T", p.cfg.HTTPClient.Transport)
	}
	own := &http.Client{Transport: roundTripper(http.DefaultTransport.RoundTrip)}
	q, _ := New(Config{URL: "https://gitlab.example.com", WebhookSecret: testHookSecret, Token: "glpat-x", Project: "acme/app", HTTPClient: own})
	if _, ok := q.cfg.HTTPClient.Transport.(roundTripper); !ok {
		t.Error("a given transport was replaced")
	}
}
