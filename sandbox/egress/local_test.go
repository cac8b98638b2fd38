package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestProxyServesLocalHosts: a host the gateway answers itself is served
// for a session's sandbox, over plain HTTP or TLS the proxy terminates,
// whatever the allowlist, with the session named in the request's
// context.
func TestProxyServesLocalHosts(t *testing.T) {
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "session=%s path=%s", core.SandboxSessionFrom(r.Context()), r.URL.Path)
	})
	addr := serveProxy(t, Config{CA: ca, Clients: oneClient{Policy{}}, Record: rec.add, Local: map[string]http.Handler{"mcp.switchboard.internal": local}})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM())
	pu, _ := url.Parse("http://" + addr)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for _, u := range []string{"http://mcp.switchboard.internal/mcp", "https://mcp.switchboard.internal/mcp"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "session=ses_a path=/mcp" {
			t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
		}
	}
	resp, err := c.Get("http://elsewhere.example/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another host: %d, want the allowlist's 403", resp.StatusCode)
	}
	evs := rec.wait(t, 2)
	if len(evs) < 2 || evs[0].Decision != core.EgressAllowed || evs[0].Reason != "served by the gateway" {
		t.Fatalf("decisions %+v", evs)
	}
}

// TestProxyFencesMovedSessions: once a session's turn runs on another
// replica, its sandbox here reaches neither the gateway's own hosts nor
// its metered model vendor; other hosts are as before.
func TestProxyFencesMovedSessions(t *testing.T) {
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	open := upstream(t)
	u, _ := url.Parse(open.URL)
	rec := &recorded{}
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tools") })
	addr := serveProxy(t, Config{CA: ca, Clients: oneClient{Policy{Hosts: []string{"models.example", u.Host}, Metered: []string{"models.example"}}},
		Record: rec.add, AllowPrivate: true, Local: map[string]http.Handler{"mcp.switchboard.internal": local},
		Fenced: func(_ context.Context, session string) string {
			return "the session's turn runs on another replica now"
		}})
	pu, _ := url.Parse("http://" + addr)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, target := range []string{"http://mcp.switchboard.internal/mcp", "http://models.example/v1/messages"} {
		resp, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "another replica") {
			t.Fatalf("%s: %d %s", target, resp.StatusCode, body)
		}
	}
	resp, err := c.Get(open.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("an unmetered host: %d", resp.StatusCode)
	}
}
