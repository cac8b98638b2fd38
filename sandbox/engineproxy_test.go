package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"testing"
)

// engineProxy stands between a backend and the Docker engine, so that a
// test can make the engine late, failing or terse as engines can be. It
// forwards every request, hijacked streams with their half-closes
// included. It can fail an exec's next inspects, answer as a terse
// engine, and hold the next exec's start the way the engine itself
// does: it answers the attach at once and starts the exec only when the
// exec has been inspected.
type engineProxy struct {
	host      string // for Config.Host
	dial      func(context.Context) (net.Conn, error)
	forward   *httputil.ReverseProxy
	transport http.RoundTripper
	// inspected hears of every inspect answered (without waiting: it
	// keeps the last 1,000 a test has not read).
	inspected chan inspectAnswer

	mu          sync.Mutex
	failInspect map[string]int // exec → inspects still to fail
	// terse: inspects answer pid 0, and a stream stays open past the
	// exec's end until the client closes its side, as some engines do.
	terse    bool
	holdNext bool
	held     map[string]chan struct{} // exec → closed at its first inspect
}

type inspectAnswer struct {
	exec    string
	failed  bool
	running bool
}

var execPath = regexp.MustCompile(`^(?:/v[0-9.]+)?/exec/([^/]+)/(json|start)$`)

func newEngineProxy(t *testing.T) *engineProxy {
	t.Helper()
	cli, err := NewClient("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	e := &engineProxy{dial: cli.Dialer(), inspected: make(chan inspectAnswer, 1000),
		failInspect: map[string]int{}, held: map[string]chan struct{}{}}
	e.transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return e.dial(ctx) }}
	e.forward = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "docker"}) },
		Transport:     e.transport,
		FlushInterval: -1,
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	e.host = "tcp://" + srv.Listener.Addr().String()
	return e
}

// failInspects makes the exec's next n inspects fail as an engine's
// error.
func (e *engineProxy) failInspects(exec string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failInspect[exec] = n
}

// beTerse makes the proxy answer as a terse engine (engineProxy.terse).
func (e *engineProxy) beTerse() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.terse = true
}

func (e *engineProxy) isTerse() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.terse
}

// holdNextStart holds the next exec started until it is inspected.
func (e *engineProxy) holdNextStart() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.holdNext = true
}

func (e *engineProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := execPath.FindStringSubmatch(r.URL.Path)
	switch {
	case m != nil && m[2] == "json" && r.Method == http.MethodGet:
		e.inspect(w, r, m[1])
	case m != nil && m[2] == "start" && r.Header.Get("Upgrade") != "":
		e.mu.Lock()
		var hold chan struct{}
		if e.holdNext {
			e.holdNext = false
			hold = make(chan struct{})
			e.held[m[1]] = hold
		}
		e.mu.Unlock()
		e.hijack(w, r, hold)
	case r.Header.Get("Upgrade") != "":
		e.hijack(w, r, nil)
	default:
		e.forward.ServeHTTP(w, r)
	}
}

func (e *engineProxy) inspect(w http.ResponseWriter, r *http.Request, exec string) {
	e.mu.Lock()
	fail := e.failInspect[exec] > 0
	if fail {
		e.failInspect[exec]--
	}
	e.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"message":"the engine is busy"}`)
		e.heard(inspectAnswer{exec: exec, failed: true})
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", "docker"
	resp, err := e.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var state struct{ Running bool }
	_ = json.Unmarshal(body, &state)
	if e.isTerse() && resp.StatusCode == http.StatusOK {
		var fields map[string]any
		if err := json.Unmarshal(body, &fields); err == nil {
			fields["Pid"] = 0
			body, _ = json.Marshal(fields)
		}
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
	e.heard(inspectAnswer{exec: exec, running: state.Running})
	e.mu.Lock()
	if hold := e.held[exec]; hold != nil {
		close(hold)
		delete(e.held, exec)
	}
	e.mu.Unlock()
}

func (e *engineProxy) heard(a inspectAnswer) {
	select {
	case e.inspected <- a:
	default:
	}
}

// hijack forwards a request that becomes a raw stream. With hold, the
// client hears the switch at once and the engine gets the request only
// when hold is closed.
func (e *engineProxy) hijack(w http.ResponseWriter, r *http.Request, hold <-chan struct{}) {
	body, err := io.ReadAll(r.Body) // the body cannot be read once hijacked
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	const upgraded = "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
	if hold != nil {
		if _, err := io.WriteString(conn, upgraded); err != nil {
			return
		}
		<-hold
	}
	up, err := e.dial(context.Background())
	if err != nil {
		return
	}
	defer up.Close()
	r.RequestURI = ""
	if err := r.Write(up); err != nil {
		return
	}
	upBuf := bufio.NewReader(up)
	resp, err := http.ReadResponse(upBuf, r)
	if err != nil {
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		if hold == nil {
			resp.Write(conn)
		}
		return
	}
	if hold == nil {
		fmt.Fprintf(conn, "HTTP/1.1 %s\r\n", resp.Status)
		resp.Header.Write(conn)
		io.WriteString(conn, "\r\n")
	}
	clientDone := make(chan struct{})
	go func() {
		io.Copy(up, buf.Reader)
		closeWrite(up)
		close(clientDone)
	}()
	// The engine ends the stream: so does the proxy, as the engine would,
	// or once the client is done with it when terse.
	io.Copy(conn, upBuf)
	if e.isTerse() {
		<-clientDone
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
