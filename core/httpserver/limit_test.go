package httpserver

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// serve runs a Server with cap max over h, on a free port; a new
// connection has grace to send its first request before it may go.
func serve(t *testing.T, max int, grace time.Duration, h http.Handler) (addr string) {
	t.Helper()
	s := New(Config{ReadTimeout: 30 * time.Second, HeaderTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxConnections: max}, h, slog.New(slog.DiscardHandler))
	s.grace = grace
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	return ln.Addr().String()
}

func get(addr, path string) <-chan error {
	answered := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + addr + path)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	return answered
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closed reports whether the server closed c (a read ends).
func closed(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, c)
		close(done)
	}()
	return done
}

// TestConnectionCapWaitsForWork: when every open connection is in a
// handler, a connection past the cap waits to be accepted, and is served
// once one of them is done.
func TestConnectionCapWaitsForWork(t *testing.T) {
	const max = 3
	release, entered := make(chan struct{}), make(chan struct{}, max)
	addr := serve(t, max, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/work" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	}))
	var working []<-chan error
	for range max {
		working = append(working, get(addr, "/work"))
		<-entered
	}
	answered := get(addr, "/")
	// A broken cap answers at once; a slow machine can only hide that.
	select {
	case err := <-answered:
		t.Fatalf("a request past the cap was answered (%v) while %d handlers were at work", err, max)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	for _, w := range append(working, answered) {
		select {
		case err := <-w:
			if err != nil {
				t.Fatalf("a request: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("a request was not served after the handlers were done")
		}
	}
}

// keepAlive sends a complete request on a new connection, reads its
// answer, and leaves the connection open and idle.
func keepAlive(t *testing.T, addr string) <-chan error {
	c := dial(t, addr)
	answered := make(chan error, 1)
	go func() {
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	return answered
}

// TestConnectionsThatNeverFinishARequestMakeWay: with the cap full of
// sockets that never sent a whole request header (silent, or trickling
// one), a complete request is answered at once, each new connection
// taking the place of the oldest of them; an idle keep-alive connection
// goes only after those, the longest idle first.
func TestConnectionsThatNeverFinishARequestMakeWay(t *testing.T) {
	const max = 4
	addr := serve(t, max, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))

	if err := <-keepAlive(t, addr); err != nil { // idle from now on
		t.Fatal(err)
	}
	silent := dial(t, addr) // says nothing
	silentClosed := closed(silent)
	trickle := dial(t, addr)
	fmt.Fprint(trickle, "GET / HTTP/1.1\r\n") // never finishes
	trickleClosed := closed(trickle)
	late := dial(t, addr) // the cap is full now
	lateClosed := closed(late)

	start := time.Now()
	for i, want := range []<-chan struct{}{silentClosed, trickleClosed, lateClosed} {
		select {
		case err := <-keepAlive(t, addr):
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d waited behind connections that never finished a request", i)
		}
		select {
		case <-want:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d took the place of another connection than the one next in line", i)
		}
	}
	t.Logf("3 requests served through a cap full of silent sockets in %v", time.Since(start).Round(time.Millisecond)) // a figure, not a bound
	// Only idle connections are left besides the working ones: the next
	// request takes the place of one of them.
	select {
	case err := <-get(addr, "/"):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request waited behind idle keep-alive connections")
	}
}

// TestANewConnectionHasAMoment: a connection accepted a moment ago that
// has not sent its request yet is not closed for another; an idle
// keep-alive connection goes instead.
func TestANewConnectionHasAMoment(t *testing.T) {
	addr := serve(t, 2, time.Hour, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	idle := dial(t, addr)
	fmt.Fprint(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(idle), nil); err != nil {
		t.Fatal(err)
	}
	idleClosed := closed(idle)
	fresh := dial(t, addr) // still thinking about its request
	freshClosed := closed(fresh)
	select {
	case err := <-get(addr, "/"):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request waited behind an idle connection")
	}
	select {
	case <-idleClosed:
	case <-freshClosed:
		t.Fatal("the fresh connection was closed for the request")
	case <-time.After(10 * time.Second):
		t.Fatal("no connection made way")
	}
}
