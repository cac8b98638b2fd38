package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// fakeCredentials is a core.CredentialSource over fixed values. One with
// an owner resolves only for that session (core.WithCredentialSession).
type fakeCredentials map[string]struct {
	hosts       []string
	name, value string
	owner       string
}

func (f fakeCredentials) Header(ctx context.Context, id, hostport string) (string, string, error) {
	c, ok := f[id]
	if !ok {
		return "", "", fmt.Errorf("credential %s: %w", id, core.ErrNotFound)
	}
	host, port, _ := net.SplitHostPort(hostport)
	n, _ := strconv.Atoi(port)
	if !core.HostAllowed(c.hosts, host, n) {
		return "", "", fmt.Errorf("credential %s not bound to %s: %w", id, hostport, core.ErrForbidden)
	}
	if s := core.CredentialSessionFrom(ctx); c.owner != "" && s != c.owner {
		return "", "", &core.ScopeError{Credential: id, Name: id, Scope: core.CredentialScope{Type: core.ScopeTenant, Tenant: "tenant-b"},
			Tenancy: core.Tenancy{Session: s, Tenant: "tenant-a"}}
	}
	return c.name, c.value, nil
}
func (fakeCredentials) Token(context.Context, string) (string, error) { return "", errors.New("no") }
func (fakeCredentials) Refresh(context.Context, string) error         { return errors.New("no") }

// oneClient identifies 127.0.0.1 as one session's sandbox.
type oneClient struct{ policy Policy }

func (o oneClient) Client(_ context.Context, a netip.Addr) (Client, error) {
	if a != netip.MustParseAddr("127.0.0.1") {
		return Client{}, fmt.Errorf("%s is no sandbox", a)
	}
	return Client{Session: "ses_a", Name: "ses_a", Policy: o.policy}, nil
}

type recorded struct {
	mu  sync.Mutex
	evs []core.EgressBody
}

func (r *recorded) add(_ context.Context, session string, b core.EgressBody) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, b)
}

func (r *recorded) wait(t *testing.T, n int) []core.EgressBody {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r.mu.Lock()
		evs := append([]core.EgressBody(nil), r.evs...)
		r.mu.Unlock()
		if len(evs) >= n || time.Now().After(deadline) {
			return evs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// upstream is a TLS server that echoes the auth headers it got.
func upstream(t *testing.T) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%q key=%q host=%q path=%s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Host, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProxy(t *testing.T) {
	injected, keyed, plain, scoped := upstream(t), upstream(t), upstream(t), upstream(t)
	cleartext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "plain %s", r.URL.Path) }))
	defer cleartext.Close()
	port := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Port() }

	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	for _, s := range []*httptest.Server{injected, keyed, plain, scoped} {
		roots.AddCert(s.Certificate())
	}
	// vcr_bearer is the session's own; vcr_theirs, bound to the same
	// host, is skipped for it; vcr_other, alone on its host, is refused.
	creds := fakeCredentials{
		"vcr_theirs": {hosts: []string{"127.0.0.1:" + port(injected)}, name: "Authorization", value: "Bearer theirs", owner: "ses_b"},
		"vcr_bearer": {hosts: []string{"127.0.0.1:" + port(injected)}, name: "Authorization", value: "Bearer vault-secret", owner: "ses_a"},
		"vcr_header": {hosts: []string{"127.0.0.1:" + port(keyed)}, name: "X-Api-Key", value: "vault-key"},
		"vcr_gone":   {hosts: []string{"elsewhere.example"}},
		"vcr_other":  {hosts: []string{"127.0.0.1:" + port(scoped)}, name: "Authorization", value: "Bearer other", owner: "ses_b"},
	}
	policy := Policy{
		Hosts:       []string{"127.0.0.1:" + port(injected), "127.0.0.1:" + port(keyed), "127.0.0.1:" + port(plain), "127.0.0.1:" + port(cleartext), "127.0.0.1:" + port(scoped)},
		Credentials: []string{"vcr_missing", "vcr_gone", "vcr_theirs", "vcr_bearer", "vcr_header", "vcr_other"},
	}
	rec := &recorded{}
	start := func(allowPrivate bool, privateHosts ...string) string {
		p, err := New(Config{CA: ca, Clients: oneClient{policy}, Credentials: creds, RootCAs: roots, AllowPrivate: allowPrivate, PrivateHosts: privateHosts, Record: rec.add})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.Serve(ln)
		t.Cleanup(func() { p.Close() })
		return "http://" + ln.Addr().String()
	}
	proxyURL := start(true)

	// The sandbox trusts the system (here: the upstreams' own) roots and
	// the deployment's CA, as its bundle does.
	sandboxRoots := roots.Clone()
	sandboxRoots.AppendCertsFromPEM(ca.CertPEM())
	client := func(proxy string) *http.Client {
		pu, _ := url.Parse(proxy)
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: sandboxRoots}}}
	}
	get := func(c *http.Client, u string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer sandbox-own")
		req.Header.Set("X-Api-Key", "sandbox-key")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	cases := []struct {
		name     string
		proxy    string
		url      string
		code     int
		body     []string
		decision core.EgressBody
	}{
		{"bearer injected, sandbox's stripped", proxyURL, injected.URL + "/repo", 200,
			[]string{`auth="Bearer vault-secret"`, `key="sandbox-key"`, `host="127.0.0.1:` + port(injected), "path=/repo"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(injected)), Method: "GET", Decision: core.EgressInjected, CredentialID: "vcr_bearer"}},
		{"header injected, both stripped", proxyURL, keyed.URL + "/x", 200,
			[]string{`auth=""`, `key="vault-key"`},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(keyed)), Method: "GET", Decision: core.EgressInjected, CredentialID: "vcr_header"}},
		{"tunnel without a credential", proxyURL, plain.URL + "/t", 200,
			[]string{`auth="Bearer sandbox-own"`},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(plain)), Method: "CONNECT", Decision: core.EgressAllowed}},
		{"plain http forwarded", proxyURL, cleartext.URL + "/p", 200,
			[]string{"plain /p"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(cleartext)), Method: "GET", Decision: core.EgressAllowed}},
		{"another tenant's credential refused", proxyURL, scoped.URL + "/s", 0,
			[]string{"Forbidden"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(scoped)), Method: "CONNECT", Decision: core.EgressDenied, CredentialID: "vcr_other",
				Reason: "credential vcr_other is scoped to tenant tenant-b, not this session's tenant"}},
		{"not on the allowlist", proxyURL, "https://127.0.0.2:9/", 0,
			[]string{"Forbidden"},
			core.EgressBody{Host: "127.0.0.2", Port: 9, Method: "CONNECT", Decision: core.EgressDenied, Reason: "not on the environment's allowlist"}},
		{"private upstream refused", start(false), plain.URL + "/", 0,
			[]string{"Forbidden"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(plain)), Method: "CONNECT", Decision: core.EgressDenied, Reason: "refused upstream address: 127.0.0.1 is a loopback address"}},
		{"private upstream reached by a host named private", start(false, "127.0.0.1"), plain.URL + "/n", 200,
			[]string{`auth="Bearer sandbox-own"`},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(plain)), Method: "CONNECT", Decision: core.EgressAllowed}},
		{"plain http to a host named private", start(false, "127.0.0.1"), cleartext.URL + "/q", 200,
			[]string{"plain /q"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(cleartext)), Method: "GET", Decision: core.EgressAllowed}},
		{"another private host still refused", start(false, "gitlab.internal"), plain.URL + "/", 0,
			[]string{"Forbidden"},
			core.EgressBody{Host: "127.0.0.1", Port: atoi(port(plain)), Method: "CONNECT", Decision: core.EgressDenied, Reason: "refused upstream address: 127.0.0.1 is a loopback address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec.mu.Lock()
			rec.evs = nil
			rec.mu.Unlock()
			code, body := get(client(c.proxy), c.url)
			if code != c.code {
				t.Errorf("status %d (%s), want %d", code, body, c.code)
			}
			for _, w := range c.body {
				if !strings.Contains(body, w) {
					t.Errorf("answer %q lacks %q", body, w)
				}
			}
			evs := rec.wait(t, 1)
			if len(evs) != 1 || evs[0] != c.decision {
				t.Errorf("decisions %+v, want %+v", evs, c.decision)
			}
		})
	}

	t.Run("repeats are folded", func(t *testing.T) {
		rec.mu.Lock()
		rec.evs = nil
		rec.mu.Unlock()
		c := client(proxyURL)
		for range 5 {
			get(c, "https://127.0.0.3:9/")
		}
		// Decisions are queued as they are made and recorded in order:
		// once another host's denial is recorded, so is every repeat
		// that was not folded.
		get(c, "https://127.0.0.4:9/")
		evs := rec.wait(t, 2)
		if len(evs) != 2 || evs[0].Host != "127.0.0.3" || evs[1].Host != "127.0.0.4" {
			t.Fatalf("decisions recorded for 5 identical denials and another: %+v", evs)
		}
	})
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestCAReload(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("a second load made a new CA")
	}
	leaf, err := b.Leaf("api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.CertPEM())
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool}); err != nil {
		t.Fatalf("leaf does not verify against the CA: %v", err)
	}
}

func TestRecorderFolds(t *testing.T) {
	rec := &recorded{}
	r := newRecorder(rec.add, nil)
	b := core.EgressBody{Host: "h", Port: 1, Method: "CONNECT", Decision: core.EgressDenied}
	r.add("s", b)
	r.add("s", b)
	r.add("s", b)
	r.add("t", b) // another session is another key
	// An entry past the window: the next one carries the count.
	r.mu.Lock()
	for k := range r.last {
		if k.session == "s" {
			r.last[k] = time.Now().Add(-foldWindow)
		}
	}
	r.mu.Unlock()
	r.add("s", b)
	r.close()
	evs := rec.wait(t, 3)
	if len(evs) != 3 || evs[0].Repeats != 0 || evs[2].Repeats != 2 {
		t.Fatalf("recorded %+v", evs)
	}
}
