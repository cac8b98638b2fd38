package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// testAgents are the agents withAgents serves, by id.
var testAgents = map[string]string{"agt_1": "nightly", "agt_d": "default"}

// withAgents answers the agents' reads (GET /v1/agents, and one agent by
// id or name) as the API does, and passes every other request to next,
// so a test of a command sees only the requests it is about.
func withAgents(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/agents") {
			next.ServeHTTP(w, r)
			return
		}
		agent := func(id string) map[string]any {
			return map[string]any{"id": id, "name": testAgents[id], "version": 1}
		}
		ref, one := strings.CutPrefix(r.URL.Path, "/v1/agents/")
		if !one {
			data := []map[string]any{}
			for _, id := range []string{"agt_1", "agt_d"} {
				data = append(data, agent(id))
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false})
			return
		}
		for id, name := range testAgents {
			if ref == id || ref == name {
				_ = json.NewEncoder(w).Encode(agent(id))
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"not_found","message":"no such agent"}}`))
	})
}

// TestShowAgentRef: a record names its agent, with its id; an agent that
// cannot be read is its id.
func TestShowAgentRef(t *testing.T) {
	tests := []struct{ name, want string }{
		{"nightly", "nightly (agt_1, version 3)"},
		{"", "agt_1 (version 3)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := showAgentRef(core.AgentRef{ID: "agt_1", Version: 3}, tc.name); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
