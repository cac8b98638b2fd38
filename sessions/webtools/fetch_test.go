package webtools

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/netguard"
)

// site is a test web site: a page, a robots.txt that keeps /private
// out, a redirect, a large page, a binary file and a page that never
// answers.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(siteMux())
	t.Cleanup(srv.Close)
	return srv
}

func siteMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /private\n"))
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != userAgentHeader {
			http.Error(w, "user agent "+r.Header.Get("User-Agent"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>Release notes</title><script>tracking()</script></head>
<body><h1>Release 2.0</h1><p>The gateway now <em>fetches</em> pages. Read <a href="/docs">the docs</a>.</p></body></html>`))
	})
	mux.HandleFunc("/private/page", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("private text")) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/page", http.StatusFound) })
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3/admin", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("a", 5000)))
	})
	mux.HandleFunc("/file.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	return mux
}

func fetchWith(t *testing.T, cfg Config, url string) core.ToolResult {
	t.Helper()
	tools, err := New(cfg, nil).Tools(context.Background(), &core.Session{ID: "sess_1"}, &core.Agent{})
	if err != nil {
		t.Fatal(err)
	}
	var fetch core.Tool
	for _, tool := range tools {
		if tool.Def().Name == FetchTool {
			fetch = tool
		}
	}
	if fetch == nil {
		t.Fatalf("no %s among %d tools", FetchTool, len(tools))
	}
	in, _ := json.Marshal(map[string]string{"url": url})
	res, err := fetch.Call(context.Background(), core.ToolCall{Name: FetchTool, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func testConfig() Config {
	return Config{Fetch: true, FetchPolicy: core.PolicyAllow, MaxBytes: 1 << 20, Timeout: 10 * time.Second, Robots: true, AllowPrivate: true}
}

// TestFetchFromGateway: a session without a sandbox fetches from the
// gateway; the loopback test site is reachable only because private
// addresses are allowed.
func TestFetchFromGateway(t *testing.T) {
	srv := site(t)
	cfg := testConfig()
	for _, tc := range []struct {
		name, path string
		cfg        func(*Config)
		isError    bool
		want       []string
		not        []string
	}{
		{name: "page", path: "/page", want: []string{"URL: " + srv.URL + "/page", "Status: 200", "Title: Release notes", "# Release 2.0", "The gateway now fetches pages. Read [the docs](" + srv.URL + "/docs)."}, not: []string{"tracking"}},
		{name: "redirect", path: "/moved", want: []string{"URL: " + srv.URL + "/page", "# Release 2.0"}},
		{name: "json as is", path: "/data.json", want: []string{`{"ok":true}`}},
		{name: "robots", path: "/private/page", isError: true, want: []string{"refused by robots.txt: " + srv.URL + "/robots.txt disallows /private/page for switchboard"}},
		{name: "robots off", path: "/private/page", cfg: func(c *Config) { c.Robots = false }, want: []string{"private text"}},
		{name: "size cap", path: "/big", cfg: func(c *Config) { c.MaxBytes = 1024 }, want: []string{"[the page is larger than 1024 bytes: only its beginning was read]", strings.Repeat("a", 1024) + ""}, not: []string{strings.Repeat("a", 1025)}},
		{name: "time cap", path: "/hang", cfg: func(c *Config) { c.Timeout = 300 * time.Millisecond }, isError: true, want: []string{"timed out after 300ms"}},
		{name: "redirect loop", path: "/loop", isError: true, want: []string{"after 5 redirects: stopped"}},
		{name: "not text", path: "/file.png", isError: true, want: []string{"is image/png (8 bytes): web_fetch returns text and HTML pages only"}},
		{name: "not found", path: "/nothing", isError: true, want: []string{"Status: 404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			res := fetchWith(t, c, srv.URL+tc.path)
			if res.IsError != tc.isError {
				t.Errorf("is_error %v, want %v: %s", res.IsError, tc.isError, res.Output)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, res.Output)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Output, n) {
					t.Errorf("output holds %q:\n%s", n, res.Output)
				}
			}
		})
	}
}

// TestFetchRefusesPrivate: with the default settings the gateway's
// fetcher refuses loopback and private addresses, by name or literal,
// and a URL it may not fetch at all.
func TestFetchRefusesPrivate(t *testing.T) {
	srv := site(t)
	cfg := testConfig()
	cfg.AllowPrivate = false
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	for _, tc := range []struct{ url, want string }{
		{srv.URL + "/page", "refused: " + strings.TrimPrefix(srv.URL, "http://") + " is reached at an address the gateway may not fetch from (127.0.0.1 is a loopback address); web_fetch reaches public addresses only"},
		{"http://localhost:" + port + "/page", "refused: localhost:" + port + " is reached at an address the gateway may not fetch from"},
		{"http://10.0.0.1/", "10.0.0.1 is a private address"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"},
		{"file:///etc/passwd", "only http and https URLs are fetched"},
		{"http://user:pw@example.org/", "URLs with a user name or password are refused"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			res := fetchWith(t, cfg, tc.url)
			if !res.IsError || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("want an error with %q, got %v: %s", tc.want, res.IsError, res.Output)
			}
		})
	}
}

// TestFetchRedirectChecked: a redirect is checked like the first URL: a
// public page that redirects to a private address is refused at the
// redirect.
func TestFetchRedirectChecked(t *testing.T) {
	srv := site(t)
	// The site's own loopback address stands for a public one here.
	control := func(network, address string, c syscall.RawConn) error {
		if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().IsLoopback() {
			return nil
		}
		return netguard.DialControl(network, address, c)
	}
	f := &fetcher{tr: newDirectControl(control), maxBytes: 1 << 20, timeout: 10 * time.Second, robots: true}
	if _, err := f.fetch(context.Background(), srv.URL+"/page"); err != nil {
		t.Fatalf("the public page: %v", err)
	}
	_, err := f.fetch(context.Background(), srv.URL+"/to-private")
	if err == nil || !strings.Contains(err.Error(), "refused: 10.1.2.3 is reached at an address the gateway may not fetch from (10.1.2.3 is a private address)") {
		t.Fatalf("redirect to a private address: %v", err)
	}
}
