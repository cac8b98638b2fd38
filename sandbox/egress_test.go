package sandbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// envTable is an EnvironmentSource over a map the test changes.
type envTable struct {
	mu   sync.Mutex
	envs map[string]*core.Environment
}

func (e *envTable) set(session string, env *core.Environment) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.envs == nil {
		e.envs = map[string]*core.Environment{}
	}
	if env != nil {
		if err := env.Validate(); err != nil {
			panic(err)
		}
		if env.ID == "" {
			env.ID = core.NewID(core.PrefixEnvironment)
		}
	}
	e.envs[session] = env
}

func (e *envTable) SessionEnvironment(_ context.Context, session string) (*core.Environment, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	env, ok := e.envs[session]
	if ok && env == nil {
		return nil, fmt.Errorf("environment of %s: %w", session, core.ErrNotFound)
	}
	if env == nil {
		return nil, nil
	}
	cp := *env
	return &cp, nil
}

// decisions collects the proxy's decisions by session.
type decisions struct {
	mu  sync.Mutex
	got map[string][]core.EgressBody
}

func (d *decisions) record(_ context.Context, session string, b core.EgressBody) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.got == nil {
		d.got = map[string][]core.EgressBody{}
	}
	d.got[session] = append(d.got[session], b)
}

// waitFor waits until session has a decision matching want (its
// host, port, method, decision and credential; reason when given).
func (d *decisions) waitFor(t testing.TB, session string, want core.EgressBody) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d.mu.Lock()
		got := append([]core.EgressBody(nil), d.got[session]...)
		d.mu.Unlock()
		for _, g := range got {
			if g.Host == want.Host && g.Port == want.Port && g.Method == want.Method && g.Decision == want.Decision &&
				g.CredentialID == want.CredentialID && (want.Reason == "" || g.Reason == want.Reason) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no decision %+v for %s; got %+v", want, session, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// egressSetup is what a test with the egress proxy shares.
type egressSetup struct {
	envs  *envTable
	dec   *decisions
	ca    *egress.CA
	caDir string
	creds fakeCredentials
	roots *x509.CertPool
}

// newEgressDocker is newDocker with the egress proxy on (private upstreams
// allowed, as the test upstreams are on the host), a CA of the test's own
// and a table of environments.
func newEgressDocker(t testing.TB, mod ...func(*Config, *egressSetup)) (*Docker, *egressSetup) {
	t.Helper()
	sandboximage.ForTest(t) // fails or skips without Docker, saying so
	if err := iptables(context.Background(), "iptables", "-S", "INPUT"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the egress proxy's firewall needs root and iptables (%v): the egress tests need them under CI=true", err)
		}
		t.Skipf("the egress proxy's firewall needs root and iptables (%v): egress tests skipped (under CI=true they fail)", err)
	}
	s := &egressSetup{envs: &envTable{}, dec: &decisions{}, caDir: t.TempDir(), creds: fakeCredentials{}, roots: x509.NewCertPool()}
	ca, err := egress.LoadOrCreateCA(s.caDir)
	if err != nil {
		t.Fatal(err)
	}
	s.ca = ca
	d := newDocker(t, func(c *Config) {
		c.Environments = s.envs
		c.Egress = &EgressConfig{CA: ca, Credentials: s.creds, RootCAs: s.roots, AllowPrivate: true, Record: s.dec.record}
		for _, m := range mod {
			m(c, s)
		}
	})
	return d, s
}

// fakeCredentials is a core.CredentialSource over fixed values, bound to
// hosts as the vault binds them.
type fakeCredentials map[string]fakeCredential

type fakeCredential struct {
	hosts       []string
	name, value string
}

func (f fakeCredentials) Header(_ context.Context, id, hostport string) (string, string, error) {
	c, ok := f[id]
	if !ok {
		return "", "", fmt.Errorf("credential %s: %w", id, core.ErrNotFound)
	}
	host, port, _ := net.SplitHostPort(hostport)
	n, _ := strconv.Atoi(port)
	if !core.HostAllowed(c.hosts, host, n) {
		return "", "", fmt.Errorf("credential %s is not bound to %s: %w", id, hostport, core.ErrForbidden)
	}
	return c.name, c.value, nil
}
func (fakeCredentials) Token(context.Context, string) (string, error) { return "", errors.New("none") }
func (fakeCredentials) Refresh(context.Context, string) error         { return errors.New("none") }

// tlsUpstream serves HTTPS on addr (host:0) with a certificate of its
// own for the host, and echoes the Authorization header it got.
func tlsUpstream(t testing.TB, host string) (port int, certPEM []byte, cert *x509.Certificate) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "test upstream"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IsCA:         true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(host)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	ln, err := tls.Listen("tcp", net.JoinHostPort(host, "0"), &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%q path=%s", r.Header.Get("Authorization"), r.URL.Path)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert
}

// TestEgress (acceptance 4): from inside the sandbox, with curl, an HTTPS
// request to an allowlisted host bound to a vault credential reaches the
// upstream with the credential injected and the sandbox's own
// Authorization stripped; a host off the list gets 403; a host on the list
// without a credential is tunnelled untouched (the sandbox sees the
// upstream's own certificate). Each decision is recorded for the session,
// and the CA's key is nowhere in the sandbox.
func TestEgress(t *testing.T) {
	d, s := newEgressDocker(t)
	// The host's address on Docker's default bridge: reachable by the
	// gateway, not (directly) by the sandbox.
	hostIP := sandboximage.HostBridgeAddress(t)
	credPort, _, credCert := tlsUpstream(t, hostIP)
	tunnelPort, tunnelPEM, tunnelCert := tlsUpstream(t, hostIP)
	offPort, _, _ := tlsUpstream(t, hostIP)
	s.roots.AddCert(credCert)
	s.roots.AddCert(tunnelCert)
	credID := core.NewID(core.PrefixCredential)
	s.creds[credID] = fakeCredential{hosts: []string{hostIP + ":" + strconv.Itoa(credPort)}, name: "Authorization", value: "Bearer vault-secret-" + randomHex(4)}
	session := newSession()
	s.envs.set(session, &core.Environment{
		Name:        "egress",
		Network:     core.NetworkPolicy{Mode: core.NetworkAllowlist, AllowedHosts: []string{hostIP + ":" + strconv.Itoa(credPort), hostIP + ":" + strconv.Itoa(tunnelPort)}},
		Credentials: []string{credID},
	})

	url := func(port int, path string) string { return "https://" + hostIP + ":" + strconv.Itoa(port) + path }
	res, err := d.Exec(context.Background(), session, core.ExecRequest{
		Cmd: []string{fmt.Sprintf(`printf '%%s' "$1" > /tmp/upstream.pem
echo "injected: $(curl -sS -m 10 -H 'Authorization: Bearer sandbox-own' %s 2>&1)"
echo "tunnel: $(curl -sS -m 10 --cacert /tmp/upstream.pem -H 'Authorization: Bearer sandbox-own' %s 2>&1)"
curl -sS -m 10 -o /dev/null -w 'off: %%{http_connect}\n' %s 2>/dev/null; true`,
			url(credPort, "/secret"), url(tunnelPort, "/open"), url(offPort, "/")), string(tunnelPEM)},
		Shell: true, Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	value := s.creds[credID].value
	for _, want := range []string{
		fmt.Sprintf("injected: auth=%q path=/secret\n", value),
		`tunnel: auth="Bearer sandbox-own" path=/open` + "\n",
		"off: 403\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inside the sandbox:\n%s\n%s\nwant a line %q", out, res.Stderr, want)
		}
	}
	s.dec.waitFor(t, session, core.EgressBody{Host: hostIP, Port: credPort, Method: "GET", Decision: core.EgressInjected, CredentialID: credID})
	s.dec.waitFor(t, session, core.EgressBody{Host: hostIP, Port: tunnelPort, Method: "CONNECT", Decision: core.EgressAllowed})
	s.dec.waitFor(t, session, core.EgressBody{Host: hostIP, Port: offPort, Method: "CONNECT", Decision: core.EgressDenied, Reason: "not on the environment's allowlist"})

	// The CA's certificate is trusted inside; its key is nowhere.
	keyPEM, err := os.ReadFile(filepath.Join(s.caDir, egress.CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	keyLine := strings.Split(string(keyPEM), "\n")[1]
	found, err := d.Exec(context.Background(), session, core.ExecRequest{
		Cmd:   []string{`grep -rlsF -e "$1" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; grep -c "$2" ` + sandboxCABundle, keyLine, strings.Split(string(s.ca.CertPEM()), "\n")[1]},
		Shell: true, Timeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(found.Stdout)) != "1" {
		t.Fatalf("want the CA certificate once in the bundle and its key nowhere; got %q", found.Stdout)
	}
}

// grantTable is a GrantSource over fixed policies.
type grantTable map[string]egress.Policy

func (g grantTable) SessionGrant(_ context.Context, session string) (egress.Policy, error) {
	return g[session], nil
}

// TestEgressGrant: a session with no environment reaches the host its
// grant names, with the grant's credential injected, and nothing else; a
// session without a grant reaches nothing.
func TestEgressGrant(t *testing.T) {
	grants := grantTable{}
	d, s := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.Egress.Grants = grants })
	hostIP := sandboximage.HostBridgeAddress(t)
	port, _, cert := tlsUpstream(t, hostIP)
	otherPort, _, _ := tlsUpstream(t, hostIP)
	s.roots.AddCert(cert)
	hostport := hostIP + ":" + strconv.Itoa(port)
	credID := "grant-" + randomHex(4)
	s.creds[credID] = fakeCredential{hosts: []string{hostport}, name: "Authorization", value: "Basic granted-" + randomHex(4)}
	granted, plain := newSession(), newSession()
	grants[granted] = egress.Policy{Hosts: []string{hostport}, Credentials: []string{credID}}

	script := fmt.Sprintf(`echo "in: $(curl -sS -m 10 https://%s/repo.git 2>&1)"
curl -sS -m 10 -o /dev/null -w 'other: %%{http_connect}\n' https://%s:%d/ 2>/dev/null; true`, hostport, hostIP, otherPort)
	for session, want := range map[string][]string{
		granted: {fmt.Sprintf("in: auth=%q path=/repo.git\n", s.creds[credID].value), "other: 403\n"},
		plain:   {"in: curl: (56)", "other: 403\n"},
	} {
		res, err := d.Exec(context.Background(), session, core.ExecRequest{Cmd: []string{script}, Shell: true, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(res.Stdout), w) {
				t.Errorf("session %s:\n%s\nwant %q", session, res.Stdout, w)
			}
		}
	}
	s.dec.waitFor(t, granted, core.EgressBody{Host: hostIP, Port: port, Method: "GET", Decision: core.EgressInjected, CredentialID: credID})
}
