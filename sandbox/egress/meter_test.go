package egress

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestProxyMeters: the responses of a metered host whose key the proxy
// injects are read for their model usage, streamed or whole, and told to
// the meter with the session; another injected host's are not.
func TestProxyMeters(t *testing.T) {
	model := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "sk-real" {
			http.Error(w, "bad key "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
			return
		}
		if strings.Contains(r.URL.RawQuery, "stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"type":"message_start","message":{"model":"claude-test","usage":{"input_tokens":300,"output_tokens":1}}}`+"\n\n")
			w.(http.Flusher).Flush()
			fmt.Fprint(w, `data: {"type":"message_delta","usage":{"output_tokens":25}}`+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"claude-test","usage":{"input_tokens":100,"output_tokens":7}}`)
	}))
	defer model.Close()
	other := upstream(t)
	port := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Port() }
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(model.Certificate())
	roots.AddCert(other.Certificate())
	modelHost, otherHost := "127.0.0.1:"+port(model), "127.0.0.1:"+port(other)
	creds := fakeCredentials{
		"vcr_model": {hosts: []string{modelHost}, name: "X-Api-Key", value: "sk-real"},
		"vcr_other": {hosts: []string{otherHost}, name: "Authorization", value: "Bearer other"},
	}
	policy := Policy{Hosts: []string{modelHost, otherHost}, Credentials: []string{"vcr_model", "vcr_other"}, Metered: []string{modelHost}}
	var mu sync.Mutex
	var metered []string
	addr := serveProxy(t, Config{CA: ca, Clients: oneClient{policy}, Credentials: creds, RootCAs: roots, AllowPrivate: true,
		Meter: func(session, model string, u core.Usage) {
			mu.Lock()
			defer mu.Unlock()
			metered = append(metered, fmt.Sprintf("%s %s in=%d out=%d", session, model, u.InputTokens, u.OutputTokens))
		}})
	sandboxRoots := x509.NewCertPool()
	sandboxRoots.AppendCertsFromPEM(ca.CertPEM())
	pu, _ := url.Parse("http://" + addr)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: sandboxRoots}}}
	for _, u := range []string{model.URL + "/v1/messages", model.URL + "/v1/messages?stream", other.URL + "/api"} {
		req, _ := http.NewRequest("POST", u, strings.NewReader(`{}`))
		req.Header.Set("X-Api-Key", "sk-placeholder")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", u, resp.StatusCode, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"ses_a claude-test in=100 out=7", "ses_a claude-test in=300 out=25"}
	if strings.Join(metered, "|") != strings.Join(want, "|") {
		t.Fatalf("metered %q, want %q", metered, want)
	}
}

// serveProxy serves a proxy of cfg on loopback for the test and returns
// its address.
func serveProxy(t *testing.T, cfg Config) string {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return ln.Addr().String()
}
