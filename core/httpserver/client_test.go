package httpserver

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/web"
)

// TestClientAddress: a handler sees the client a trusted proxy forwarded
// for, and the connection's peer when the peer is not trusted.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted string
		want    string
	}{
		{name: "behind a trusted proxy", trusted: "127.0.0.1", want: "198.51.100.9"},
		{name: "no proxy trusted", trusted: "", want: "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trusted, err := web.ParseTrustedProxies(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			s := New(Config{ReadTimeout: time.Minute, IdleTimeout: time.Minute, MaxConnections: 4, TrustedProxies: trusted},
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, web.Client(r)) }), slog.New(slog.DiscardHandler))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go s.Serve(ln)
			t.Cleanup(func() { s.Shutdown(t.Context()) })
			req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
			req.Header.Set("X-Forwarded-For", "198.51.100.9")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != tc.want {
				t.Fatalf("client %q, want %q", body, tc.want)
			}
		})
	}
}
