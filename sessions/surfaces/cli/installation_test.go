package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestInstallationPolicyKeepsTheOtherList: the API replaces the whole
// policy, so a flag for one list must send the other as it is.
func TestInstallationPolicyKeepsTheOtherList(t *testing.T) {
	var posted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"ins_1","provider":"slack","external_id":"T1","name":"acme","policy":{"channels":["C1"],"users":["U1","U2"]}}],"has_more":false}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		posted = string(b)
		io.WriteString(w, `{"id":"ins_1","provider":"slack","external_id":"T1","policy":{"channels":[],"users":[]}}`)
	}))
	defer srv.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string // the body posted, or stderr when code != 0
	}{
		{"a channel keeps the users", []string{"--channel", "C9"}, 0, `{"policy":{"channels":["C9"],"users":["U1","U2"]}}`},
		{"a user keeps the channels", []string{"--user", "U9"}, 0, `{"policy":{"channels":["C1"],"users":["U9"]}}`},
		{"both replace both", []string{"--user", "U9", "--channel", "C9"}, 0, `{"policy":{"channels":["C9"],"users":["U9"]}}`},
		{"clear the users", []string{"--clear-users"}, 0, `{"policy":{"channels":["C1"],"users":[]}}`},
		{"clear the channels", []string{"--clear-channels"}, 0, `{"policy":{"channels":[],"users":["U1","U2"]}}`},
		{"an agent only leaves the policy", []string{"--agent", ""}, 0, `{"agent":""}`},
		{"clear and set contradict", []string{"--clear-users", "--user", "U9"}, 2, "contradict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			posted = ""
			var out, errOut bytes.Buffer
			args := append([]string{"installation", "policy", "acme", "--url", srv.URL, "--token", "t"}, tt.args...)
			code := cli(args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut.String())
			}
			if tt.code != 0 {
				if !strings.Contains(errOut.String(), tt.want) || posted != "" {
					t.Fatalf("stderr %q, posted %q", errOut.String(), posted)
				}
				return
			}
			if posted != tt.want {
				t.Fatalf("posted %s\nwant   %s", posted, tt.want)
			}
		})
	}
}
