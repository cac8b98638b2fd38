package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEnvironmentUpdateKeepsNetworkMode: the API replaces the network
// policy whole, and an empty mode reads as none.
func TestEnvironmentUpdateKeepsNetworkMode(t *testing.T) {
	var posted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			posted = string(b)
		}
		io.WriteString(w, `{"id":"env_1","name":"e","network":{"mode":"allowlist","allowed_hosts":["a.example.com"]}}`)
	}))
	defer srv.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--allow-host", "b.example.com"}, `"network":{"mode":"allowlist","allowed_hosts":["b.example.com"]}`},
		{[]string{"--network", "none"}, `"network":{"mode":"none"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			posted = ""
			var out, errOut bytes.Buffer
			args := append([]string{"environment", "update", "env_1", "--url", srv.URL, "--token", "t"}, tt.args...)
			if code := cli(args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if !strings.Contains(posted, tt.want) {
				t.Fatalf("posted %s\nwant it to hold %s", posted, tt.want)
			}
		})
	}
	var out bytes.Buffer
	cli([]string{"environment", "update", "--help"}, func(string) string { return "" }, strings.NewReader(""), &out, &out)
	if !strings.Contains(out.String(), "none or allowlist") {
		t.Errorf("--network's help names modes the API refuses:\n%s", out.String())
	}
}
