package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestSessionsPageNames: the sessions table names each session's agent
// (an agent deleted since by its id), shows the start of its first
// message (the whole in the cell's title) and its thread's title; the
// agent filter offers the agents by name and takes a name or an id.
func TestSessionsPageNames(t *testing.T) {
	long := "please look at why the deploy fails\nevery Friday afternoon, when the release train leaves the station and nobody is around"
	titled := session(1, core.StatusIdle)
	titled.Agent = core.AgentRef{ID: "agt_1", Version: 2}
	titled.FirstText = long
	titled.Origin = &core.Origin{Provider: "forge", Key: "forge:o/r#7", URL: "https://forge.example/o/r/issues/7", Title: "Flaky deploy on Fridays"}
	gone := session(2, core.StatusIdle)
	gone.Agent = core.AgentRef{ID: "agt_gone", Version: 1}
	tests := []struct {
		query, wantAgent string
		want             []string
	}{
		{"", "", []string{
			`<a href="agents/agt_1">triage</a> v2`,
			`<code>agt_gone</code> v1`,
			`title="` + long + `">please look at why the deploy fails every Friday afternoon, when the release tra…</td>`,
			`<a href="https://forge.example/o/r/issues/7" rel="noopener noreferrer">Flaky deploy on Fridays</a> <span class="dim">forge</span>`,
			`<span class="dim">none yet</span>`,
			`<option value="agt_2">deploy</option>`, `<option value="agt_1">triage</option>`,
		}},
		{"agent=triage", "agt_1", []string{`<option value="agt_1" selected>triage</option>`}},
		{"agent=agt_1", "agt_1", []string{`<option value="agt_1" selected>triage</option>`}},
		// An agent deleted since: its sessions are still found by its id.
		{"agent=agt_gone", "agt_gone", []string{`<option value="agt_gone" selected>agt_gone</option>`}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e := newEnv(t, "")
			e.store.agents = []*core.Agent{{ID: "agt_1", Name: "triage"}, {ID: "agt_2", Name: "deploy"}}
			e.store.list = core.SessionList{Sessions: []*core.Session{titled, gone}}
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/sessions?" + tt.query, cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if _, filters := e.store.calls(); len(filters) != 1 || filters[0].AgentID != tt.wantAgent {
				t.Fatalf("filters %+v, want agent %q", filters, tt.wantAgent)
			}
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			// The choices are in name order.
			if strings.Index(body, ">deploy</option>") > strings.Index(body, ">triage</option>") {
				t.Error("the agents are not in name order")
			}
			if t.Failed() {
				t.Log(body)
			}
		})
	}
}
