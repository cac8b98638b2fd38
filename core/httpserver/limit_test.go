package httpserver

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnectionCap: past the cap a connection waits to be accepted, and
// is served once an open one closes.
func TestConnectionCap(t *testing.T) {
	const max = 3
	s := New(Config{ReadTimeout: time.Minute, IdleTimeout: time.Minute, MaxConnections: max},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	var held []net.Conn
	for range max {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprint(c, "GET / HTTP/1.1\r\n") // headers never finished
		held = append(held, c)
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + ln.Addr().String())
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	// A broken cap answers at once; a slow machine can only hide that.
	select {
	case err := <-answered:
		t.Fatalf("a request past the cap was answered (%v) while %d connections were open", err, max)
	case <-time.After(500 * time.Millisecond):
	}
	held[0].Close()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the waiting request: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the waiting request was not served after a connection closed")
	}
}
