package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
)

// TestProxyPanicClosesThatConnection: a panic while the proxy serves a
// request, plain or inside a tunnel it terminates, closes that
// connection, is logged once with its stack, and the proxy serves the
// next connection.
func TestProxyPanicClosesThatConnection(t *testing.T) {
	for _, target := range []string{"http://boom.internal/x", "https://boom.internal/x"} {
		t.Run(target, func(t *testing.T) {
			ca, err := LoadOrCreateCA(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			logged := panictest.New()
			local := map[string]http.Handler{
				"boom.internal": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("local handler bug") }),
				"fine.internal": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "fine") }),
			}
			addr := serveProxy(t, Config{CA: ca, Clients: oneClient{Policy{}}, Local: local, Logger: logged.Logger()})
			pu, _ := url.Parse("http://" + addr)
			// A connection per request: a broken one is not retried on.
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			if resp, err := c.Get(target); err == nil {
				resp.Body.Close()
				t.Fatalf("the request that panicked was answered %d; want its connection closed", resp.StatusCode)
			}
			resp, err := c.Get(strings.Replace(target, "boom", "fine", 1))
			if err != nil {
				t.Fatalf("the next connection: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "fine" {
				t.Fatalf("the next connection: %d %s", resp.StatusCode, body)
			}
			logged.WantOne(t, "panic_test.go", "remote_addr=127.0.0.1:")
		})
	}
}

// TestRecoveringClosesATakenOverConnection: a handler that took its
// connection over (a tunnel) and then panicked has that connection
// closed.
func TestRecoveringClosesATakenOverConnection(t *testing.T) {
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logged := panictest.New()
	p, err := New(Config{CA: ca, Clients: oneClient{Policy{}}, Logger: logged.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.recovering(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		panic("tunnel bug")
	})))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(conn, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	got, err := io.ReadAll(bufio.NewReader(conn))
	if err != nil || string(got) != "HTTP/1.1 200 Connection established\r\n\r\n" {
		t.Fatalf("read %q, %v; want the 200 then the connection closed", got, err)
	}
	logged.WantOne(t, "panic_test.go", "method=CONNECT")
}

// TestRecorderGoesOnAfterAPanic: a panic while one decision is recorded
// loses that record only.
func TestRecorderGoesOnAfterAPanic(t *testing.T) {
	logged := panictest.New()
	var calls atomic.Int32
	rec := &recorded{}
	r := newRecorder(func(ctx context.Context, session string, b core.EgressBody) {
		if calls.Add(1) == 1 {
			panic("record bug")
		}
		rec.add(ctx, session, b)
	}, logged.Logger())
	r.add("ses_a", core.EgressBody{Host: "first.example", Port: 443, Decision: core.EgressDenied})
	r.add("ses_a", core.EgressBody{Host: "second.example", Port: 443, Decision: core.EgressDenied})
	r.close()
	if evs := rec.wait(t, 1); len(evs) != 1 || evs[0].Host != "second.example" {
		t.Fatalf("recorded %+v, want the second decision", evs)
	}
	logged.WantOne(t, "panic_test.go", "session_id=ses_a", "host=first.example")
}
