package webtools

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// localSandbox runs a session's commands on this machine, with the
// environment a sandbox has: only the proxy variables, and PATH.
type localSandbox struct{ env []string }

func (s localSandbox) Exec(ctx context.Context, _ string, req core.ExecRequest) (*core.ExecResult, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", req.Cmd[0], "sh"}, req.Cmd[1:]...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, s.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := &core.ExecResult{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

// sandboxClient is the session whose sandbox every connection is from.
type sandboxClient struct{ policy egress.Policy }

func (c sandboxClient) Client(context.Context, netip.Addr) (egress.Client, error) {
	return egress.Client{Session: "sess_1", Name: "sess_1", Policy: c.policy}, nil
}

// startProxy runs an egress proxy for one session's sandbox, allowed
// hosts, its decisions sent on the channel returned.
func startProxy(t *testing.T, hosts []string, allowPrivate bool, roots ...*x509.Certificate) (string, <-chan core.EgressBody) {
	t.Helper()
	ca, err := egress.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	decisions := make(chan core.EgressBody, 64)
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	p, err := egress.New(egress.Config{CA: ca, Clients: sandboxClient{egress.Policy{Hosts: hosts}}, AllowPrivate: allowPrivate, RootCAs: pool,
		Record: func(_ context.Context, _ string, b core.EgressBody) { decisions <- b }})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return "http://" + ln.Addr().String(), decisions
}

func fetchInSandbox(t *testing.T, sb core.Sandbox, robots bool, url string) core.ToolResult {
	t.Helper()
	cfg := testConfig()
	cfg.AllowPrivate, cfg.Robots = false, robots
	tools, err := New(cfg, sb).Tools(context.Background(), &core.Session{ID: "sess_1"}, &core.Agent{})
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", tools, err)
	}
	res, err := tools[0].Call(context.Background(), core.ToolCall{Name: FetchTool, Input: []byte(fmt.Sprintf(`{"url":%q}`, url))})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFetchFromSandbox: a session with a sandbox fetches through its
// egress proxy (curl in the sandbox, the proxy connecting): its
// allowlist, its private address guard and robots.txt all apply, and the
// proxy's decisions are the session's.
func TestFetchFromSandbox(t *testing.T) {
	srv := site(t)
	hostport := strings.TrimPrefix(srv.URL, "http://")
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	proxy, decisions := startProxy(t, []string{hostport}, true)
	sb := localSandbox{env: []string{"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy}}

	t.Run("page", func(t *testing.T) {
		res := fetchInSandbox(t, sb, true, srv.URL+"/moved")
		if res.IsError || !strings.Contains(res.Output, "URL: "+srv.URL+"/page") || !strings.Contains(res.Output, "The gateway now fetches pages. Read [the docs]("+srv.URL+"/docs).") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
	})
	t.Run("robots", func(t *testing.T) {
		res := fetchInSandbox(t, sb, true, srv.URL+"/private/page")
		if !res.IsError || !strings.Contains(res.Output, "disallows /private/page for switchboard") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
	})
	t.Run("not on the allowlist", func(t *testing.T) {
		res := fetchInSandbox(t, sb, false, "http://localhost:"+port+"/page")
		if !res.IsError || !strings.Contains(res.Output, "refused by the sandbox's egress proxy: localhost:"+port+" is not on this sandbox's allowlist") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
		for {
			select {
			case d := <-decisions:
				if d.Host == "localhost" && d.Decision == core.EgressDenied {
					return
				}
			case <-time.After(time.Minute):
				t.Fatal("the proxy recorded no denial for localhost")
			}
		}
	})
	t.Run("private address", func(t *testing.T) {
		guarded, _ := startProxy(t, []string{hostport}, false)
		res := fetchInSandbox(t, localSandbox{env: []string{"HTTP_PROXY=" + guarded}}, false, srv.URL+"/page")
		if !res.IsError || !strings.Contains(res.Output, "refused by the sandbox's egress proxy: refused upstream address: 127.0.0.1 is a loopback address") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
	})
	t.Run("no proxy", func(t *testing.T) {
		res := fetchInSandbox(t, localSandbox{}, false, srv.URL+"/page")
		if !res.IsError || !strings.Contains(res.Output, "this session's sandbox has no way out") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
	})
	t.Run("https", func(t *testing.T) {
		tlsSite := httptest.NewTLSServer(siteMux())
		defer tlsSite.Close()
		tlsProxy, _ := startProxy(t, []string{strings.TrimPrefix(tlsSite.URL, "https://")}, true, tlsSite.Certificate())
		res := fetchInSandbox(t, localSandbox{env: []string{"HTTP_PROXY=" + tlsProxy}}, true, tlsSite.URL+"/page")
		if res.IsError || !strings.Contains(res.Output, "URL: "+tlsSite.URL+"/page") || !strings.Contains(res.Output, "# Release 2.0") {
			t.Fatalf("%v: %s", res.IsError, res.Output)
		}
		// The proxy verifies the site: one it does not trust is an error.
		untrusting, _ := startProxy(t, []string{strings.TrimPrefix(tlsSite.URL, "https://")}, true)
		res = fetchInSandbox(t, localSandbox{env: []string{"HTTP_PROXY=" + untrusting}}, false, tlsSite.URL+"/page")
		if !res.IsError || !strings.Contains(res.Output, "upstream unreachable") {
			t.Fatalf("an untrusted certificate: %v: %s", res.IsError, res.Output)
		}
	})
	t.Run("size cap", func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxBytes, cfg.Robots = 1024, false
		tools, _ := New(cfg, sb).Tools(context.Background(), &core.Session{ID: "sess_1"}, nil)
		res, err := tools[0].Call(context.Background(), core.ToolCall{Input: []byte(`{"url":"` + srv.URL + `/big"}`)})
		if err != nil || res.IsError || !strings.Contains(res.Output, "larger than 1024 bytes") || strings.Contains(res.Output, strings.Repeat("a", 1025)) {
			t.Fatalf("%v %v: %s", err, res.IsError, res.Output)
		}
	})
}

// countingSandbox records each command's argv and whether its context
// had a deadline.
type countingSandbox struct {
	localSandbox
	mu    sync.Mutex
	calls []string
}

func (c *countingSandbox) Exec(ctx context.Context, id string, req core.ExecRequest) (*core.ExecResult, error) {
	_, bounded := ctx.Deadline()
	c.mu.Lock()
	c.calls = append(c.calls, fmt.Sprintf("%s bounded=%v", strings.Fields(req.Cmd[0])[0], bounded))
	c.mu.Unlock()
	return c.localSandbox.Exec(ctx, id, req)
}

// TestSandboxStartedOutsideTheFetchTime: the sandbox is started first,
// once per cycle, under the turn's time, not the fetch's (a first start
// may prepare an image); the fetches then run under the fetch's.
func TestSandboxStartedOutsideTheFetchTime(t *testing.T) {
	srv := site(t)
	proxy, _ := startProxy(t, []string{strings.TrimPrefix(srv.URL, "http://")}, true)
	sb := &countingSandbox{localSandbox: localSandbox{env: []string{"HTTP_PROXY=" + proxy}}}
	cfg := testConfig()
	cfg.Robots = false
	tools, _ := New(cfg, sb).Tools(context.Background(), &core.Session{ID: "sess_1"}, nil)
	for range 2 {
		if res, err := tools[0].Call(context.Background(), core.ToolCall{Input: []byte(`{"url":"` + srv.URL + `/page"}`)}); err != nil || res.IsError {
			t.Fatalf("%v: %s", err, res.Output)
		}
	}
	want := []string{"true bounded=false", "proxy=${HTTP_PROXY:-$http_proxy} bounded=true", "proxy=${HTTP_PROXY:-$http_proxy} bounded=true"}
	if strings.Join(sb.calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands:\n%s\nwant:\n%s", strings.Join(sb.calls, "\n"), strings.Join(want, "\n"))
	}
}

// TestFetchFromGatewayDespiteSandbox: SWITCHBOARD_WEB_FETCH_FROM=gateway
// fetches from the gateway, behind netguard, though there is a sandbox.
func TestFetchFromGatewayDespiteSandbox(t *testing.T) {
	srv := site(t)
	sb := &countingSandbox{}
	cfg := testConfig()
	cfg.FromGateway, cfg.AllowPrivate = true, false
	tools, _ := New(cfg, sb).Tools(context.Background(), &core.Session{ID: "sess_1"}, nil)
	if strings.Contains(tools[0].Def().Description, "sandbox") {
		t.Fatalf("the tool says it fetches from the sandbox: %s", tools[0].Def().Description)
	}
	res, err := tools[0].Call(context.Background(), core.ToolCall{Input: []byte(`{"url":"` + srv.URL + `/page"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "is a loopback address); web_fetch reaches public addresses only") {
		t.Fatalf("%v %v: %s", err, res.IsError, res.Output)
	}
	if len(sb.calls) != 0 {
		t.Fatalf("the sandbox ran %v", sb.calls)
	}
}
