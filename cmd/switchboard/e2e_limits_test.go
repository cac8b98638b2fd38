package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// limitsEnv runs serve with a read deadline of readTimeout seconds and
// heartbeats every second, and makes a session to follow.
func limitsEnv(t *testing.T, readTimeout string) (*server, string) {
	t.Helper()
	srv := startServer(t, t.TempDir(), map[string]string{
		"SWITCHBOARD_SANDBOX":              "none",
		"SWITCHBOARD_READ_TIMEOUT_SECONDS": readTimeout,
		// The agent's model needs a client; no turn calls it.
		"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1/",
		"SWITCHBOARD_SSE_HEARTBEAT_SECONDS": "1",
		// The default of the log level is debug in these tests: 2,000
		// cut requests would be 2,000 lines to hold.
		"SWITCHBOARD_LOG_LEVEL": "info",
	})
	code, raw := srv.do("POST", "/v1/agents", map[string]any{"name": "limits", "model": "anthropic/claude-test"})
	if code != 201 {
		t.Fatalf("agent: %d %s", code, raw)
	}
	var a struct{ ID string }
	mustJSON(t, raw, &a)
	code, raw = srv.do("POST", "/v1/sessions", map[string]any{"agent": a.ID})
	if code != 201 {
		t.Fatalf("session: %d %s", code, raw)
	}
	var s struct{ ID string }
	mustJSON(t, raw, &s)
	return srv, s.ID
}

// follow opens the session's event stream; lines carries what it sends,
// closed when the stream ends.
func follow(t *testing.T, srv *server, id string) (lines <-chan string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.url+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// TestSlowBodiesAreCut: a body sent a byte at a time, faster than the
// deadline, is still cut at the request's deadline (it is not reset per
// byte), and /healthz answers while 2,000 such requests are held.
func TestSlowBodiesAreCut(t *testing.T) {
	const slow = 2000
	srv, _ := limitsEnv(t, "2")
	cut := trickle(t, srv, slow)

	// While they are held, /healthz answers.
	start := time.Now()
	resp, err := http.Get(srv.url + "/healthz")
	if err != nil {
		t.Fatalf("/healthz with %d slow requests held: %v", slow, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
	t.Logf("/healthz answered in %v with %d slow requests held", time.Since(start), slow)

	var longest time.Duration
	timeout := time.After(patience)
	for i := range slow {
		select {
		case d := <-cut:
			longest = max(longest, d)
		case <-timeout:
			t.Fatalf("%d of %d slow requests still held after %v", slow-i, slow, patience)
		}
	}
	t.Logf("%d slow requests cut, the last %v after its first byte (deadline 2s)", slow, longest)
}

// trickle opens n requests whose body comes a byte every half second,
// until the test ends; cut tells how long each lasted, once the server
// has closed it.
func trickle(t *testing.T, srv *server, n int) (cut <-chan time.Duration) {
	t.Helper()
	addr := strings.TrimPrefix(srv.url, "http://")
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	ch := make(chan time.Duration, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		start := time.Now()
		fmt.Fprintf(c, "POST /v1/agents HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", addr, adminToken)
		go func() {
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		go func() {
			// The server answers (an error) and closes, or just closes.
			_, _ = io.Copy(io.Discard, c)
			ch <- time.Since(start)
		}()
	}
	return ch
}

// TestEventStreamOutlivesTheReadDeadline: a stream lifts the deadline and
// keeps its heartbeats.
func TestEventStreamOutlivesTheReadDeadline(t *testing.T) {
	srv, id := limitsEnv(t, "2")
	lines := follow(t, srv, id)
	start := time.Now()
	beats := 0
	timeout := time.After(patience)
	// Five heartbeats a second apart are past the two-second deadline.
	for beats < 5 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended after %v and %d heartbeats", time.Since(start), beats)
			}
			if l == ": heartbeat" {
				beats++
			}
		case <-timeout:
			t.Fatalf("%d heartbeats in %v", beats, patience)
		}
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Fatalf("5 heartbeats in %v: not past the deadline", d)
	}
}

// TestStopEndsEventStreams: a stop with followers connected and slow
// requests held ends the streams with a last comment, cuts the slow
// requests, and exits without waiting out its budget.
func TestStopEndsEventStreams(t *testing.T) {
	// A read deadline longer than the shutdown budget: the slow requests
	// are cut by the stop, not by it.
	srv, id := limitsEnv(t, "600")
	cut := trickle(t, srv, 50)
	var streams []<-chan string
	for range 10 {
		lines := follow(t, srv, id)
		// The stream is open once its first line is in.
		select {
		case <-lines:
		case <-time.After(patience):
			t.Fatal("a stream sent nothing")
		}
		streams = append(streams, lines)
	}
	start := time.Now()
	if err := srv.term(); err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.out.String())
	}
	t.Logf("serve stopped in %v with %d followers and 50 slow requests", time.Since(start), len(streams))
	if strings.Contains(srv.out.String(), "http shutdown") {
		t.Errorf("the stop waited out its budget:\n%s", srv.out.String())
	}
	for range 50 {
		<-cut // the process is gone: every connection is closed
	}
	for i, lines := range streams {
		last := ""
		for l := range lines {
			if l != "" {
				last = l
			}
		}
		if last != ": server shutting down" {
			t.Errorf("stream %d ended with %q, want the shutdown comment", i, last)
		}
	}
}
