package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestDestinationCommands(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/destinations/dst_1/pause":
			io.WriteString(w, `{"id":"dst_1","url":"https://hooks.example.com/in","level":"user","types":[],"status":"paused",
				"paused_at":"2026-11-22T10:00:00.000Z","created_at":"2026-11-22T09:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}`)
		case "/v1/destinations/dst_1/resume":
			io.WriteString(w, `{"id":"dst_1","url":"https://hooks.example.com/in","level":"user","types":[],"status":"active",
				"created_at":"2026-11-22T09:00:00.000Z","updated_at":"2026-11-22T10:01:00.000Z"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"type":"not_found","message":"destination \"dst_missing\" not found"}}`)
		}
	}))
	defer srv.Close()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli(append(append([]string{"destination"}, args...), "--url", srv.URL, "--token", "t"), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout, or stderr when code != 0
		call string   // the request sent, "" for none
	}{
		{"pause", []string{"pause", "dst_1"}, 0, []string{"id:            dst_1", "status:        paused", "paused_at:     2026-11-22T10:00:00Z"}, "POST /v1/destinations/dst_1/pause Bearer t"},
		{"pause as json", []string{"pause", "dst_1", "--json"}, 0, []string{`"status": "paused"`}, "POST /v1/destinations/dst_1/pause Bearer t"},
		{"resume", []string{"resume", "dst_1"}, 0, []string{"status:        active"}, "POST /v1/destinations/dst_1/resume Bearer t"},
		{"pause of no destination", []string{"pause", "dst_missing"}, 1, []string{`destination "dst_missing" not found`}, "POST /v1/destinations/dst_missing/pause Bearer t"},
		{"create with a missing secret file", []string{"create", "https://hooks.example.com/in", "--secret-file", "/nonexistent/secret"}, 1, []string{"--secret-file: "}, ""},
		{"no id", []string{"pause"}, 2, []string{"want 1 argument(s), got 0"}, ""},
		{"an unknown subcommand", []string{"stop", "dst_1"}, 2, []string{`unknown subcommand "stop"`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			calls = nil
			mu.Unlock()
			code, out, errOut := run(tt.args...)
			got := out
			if tt.code != 0 {
				got = errOut
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if want := []string{tt.call}; (tt.call == "" && len(calls) != 0) || (tt.call != "" && strings.Join(calls, "\n") != strings.Join(want, "\n")) {
				t.Errorf("requests %q, want %q", calls, tt.call)
			}
		})
	}
}
