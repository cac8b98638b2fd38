package web

import (
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
func TestAPIClientKeepsConnections(t *testing.T) {
	const wave = 16
	for _, tc := range []struct {
		name      string
		client    *http.Client
		wantDials int // in the second wave
	}{
		{name: "api client", client: APIClient(time.Minute), wantDials: 0},
		{name: "go's default keeps two", client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, wantDials: wave - 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			t.Cleanup(srv.Close)
			t.Cleanup(tc.client.CloseIdleConnections)
			runWave := func() {
				arrived.Add(wave)
				var done sync.WaitGroup
				for range wave {
					done.Go(func() {
						resp, err := tc.client.Get(srv.URL)
						if err != nil {
							t.Error(err)
							return
						}
						// Read to the end: the transport has kept the
						// connection (or closed it) before the read returns.
						io.ReadAll(resp.Body)
						resp.Body.Close()
					})
				}
				done.Wait()
			}
			runWave()
			if got := dials.Load(); got != wave {
				t.Fatalf("first wave: %d connections, want %d", got, wave)
			}
			runWave()
			if got := dials.Load() - wave; got != int64(tc.wantDials) {
				t.Fatalf("second wave dialed %d connections, want %d", got, tc.wantDials)
			}
		})
	}
}
