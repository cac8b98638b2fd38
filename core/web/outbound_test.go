package web

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAPIClientKeepsConnections: requests that run at once against one
// HTTP/1.1 host reuse the connections of the wave before them, where Go's
// default client keeps two and dials the rest anew.
//
// net/http keeps a connection only once its own goroutine that wrote the
// request has said so, and waits at most 50 ms for it; on a machine busy
// enough that goroutine can miss that, and nothing outside net/http can
// wait on it. So a case has three tries with a new server and client each,
// and fails only when every try dials the wrong number: a client that
// keeps fewer connections fails all three.
func TestAPIClientKeepsConnections(t *testing.T) {
	const wave, tries = 16, 3
	for _, tc := range []struct {
		name      string
		client    func() *http.Client
		wantDials int // in the second wave
	}{
		{name: "api client", client: func() *http.Client { return APIClient(time.Minute) }, wantDials: 0},
		{name: "go's default keeps two", client: func() *http.Client {
			return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		}, wantDials: wave - 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failures []string
			for range tries {
				msg := secondWaveDials(t, tc.client(), wave, tc.wantDials)
				if msg == "" {
					return
				}
				failures = append(failures, msg)
			}
			t.Fatalf("every try: %v", failures)
		})
	}
}

// secondWaveDials runs two waves of wave requests at once against a new
// server and says what differs from the first wave dialing wave
// connections and the second wantDials ("" when nothing does).
func secondWaveDials(t *testing.T, client *http.Client, wave, wantDials int) string {
	t.Helper()
	var dials atomic.Int64
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every request of a wave is in before any answers: the
		// wave holds wave connections at once.
		arrived.Done()
		arrived.Wait()
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	defer client.CloseIdleConnections()
	runWave := func() {
		arrived.Add(wave)
		var done sync.WaitGroup
		for range wave {
			done.Go(func() {
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				// Read to the end: the transport keeps the connection
				// (or closes it) as the read ends, its writer's report
				// allowing (see the test's comment).
				io.ReadAll(resp.Body)
				resp.Body.Close()
			})
		}
		done.Wait()
	}
	runWave()
	if got := dials.Load(); got != int64(wave) {
		return fmt.Sprintf("first wave: %d connections, want %d", got, wave)
	}
	runWave()
	if got := dials.Load() - int64(wave); got != int64(wantDials) {
		return fmt.Sprintf("second wave dialed %d connections, want %d", got, wantDials)
	}
	return ""
}
