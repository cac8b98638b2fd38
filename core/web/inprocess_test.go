package web_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/web"
)

func TestInProcess(t *testing.T) {
	// The stream's handler waits for next or for its request to end.
	var next chan struct{}
	var handlerDone chan error
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo/{name}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Name", r.PathValue("name"))
		w.Header().Set("X-Auth", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(r.URL.Query().Get("q") + ":" + string(b)))
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "one\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
			_, _ = io.WriteString(w, "two\n")
		case <-r.Context().Done():
			handlerDone <- r.Context().Err()
		}
	})
	mux.HandleFunc("GET /silent", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	hc := &http.Client{Transport: web.InProcess(mux)}

	t.Run("request and answer", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/echo/x?q=1", strings.NewReader("body"))
		req.Header.Set("Authorization", "Bearer t")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated || string(b) != "1:body" || resp.Header.Get("X-Name") != "x" || resp.Header.Get("X-Auth") != "Bearer t" {
			t.Fatalf("got %d %q %v", resp.StatusCode, b, resp.Header)
		}
	})
	t.Run("a handler that writes nothing answers 200", func(t *testing.T) {
		resp, err := hc.Get("http://gateway/silent")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("streams before the handler returns", func(t *testing.T) {
		next, handlerDone = make(chan struct{}), make(chan error, 1)
		resp, err := hc.Get("http://gateway/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		if line, err := rd.ReadString('\n'); err != nil || line != "one\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		close(next)
		if line, err := rd.ReadString('\n'); err != nil || line != "two\n" {
			t.Fatalf("second line %q, %v", line, err)
		}
		if _, err := rd.ReadString('\n'); err != io.EOF {
			t.Fatalf("after the handler returned: %v, want EOF", err)
		}
	})
	t.Run("canceling the request ends the handler", func(t *testing.T) {
		next, handlerDone = make(chan struct{}), make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://gateway/stream", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		cancel()
		if err := <-handlerDone; !errors.Is(err, context.Canceled) {
			t.Fatalf("handler saw %v", err)
		}
	})
	t.Run("a panic is the reader's error", func(t *testing.T) {
		resp, err := hc.Get("http://gateway/panic")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err == nil || !strings.Contains(err.Error(), "panicked: boom") {
			t.Fatalf("read: %v", err)
		}
	})
}

// TestInProcessBodyOutlivesTheHandler: a body the handler wrote whole is
// read whole however late the reader reads its end: the handler's return
// (which ends its context) must not cut it. A busy machine makes that
// late read common; here the reader waits for the handler to return.
func TestInProcessBodyOutlivesTheHandler(t *testing.T) {
	const text = "---\nname: deploy\n---\nRun it.\n"
	for i := range 300 {
		returned := make(chan struct{})
		c := &http.Client{Transport: web.InProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(returned)
			_, _ = io.WriteString(w, text)
		}))}
		resp, err := c.Get("http://in-process/file")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(text))
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		<-returned
		for range 20 {
			runtime.Gosched() // the transport's side finishes meanwhile
		}
		rest, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(rest) != 0 || string(buf) != text {
			t.Fatalf("request %d: read %q then %q, %v", i, buf, rest, err)
		}
	}
}
