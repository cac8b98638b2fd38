package slack

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestTools calls the session's tools the way the model does: through
// the MCP bridge, as mcp_slack_<tool>.
func TestTools(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0TL", Name: "Tools"}, true)
	r.fake.AddUser(fakeslack.User{ID: "U0ALICE", TeamID: "T0TL", Name: "alice", RealName: "Alice Liddell", TZ: "Europe/London"})
	s, m := r.thread("C0TL")
	r.fake.Human("T0TL", "C0TL", "U0ALICE", "a reply in the thread", m.TS)
	srv, err := r.p.ToolServer(t.Context(), s)
	if err != nil || srv == nil {
		t.Fatalf("tool server: %v", err)
	}
	if again, _ := r.p.ToolServer(t.Context(), s); again != srv {
		t.Fatal("a second cycle got another server: the bridge would reconnect")
	}
	pool := mcpbridge.New(mcpbridge.Config{})
	defer pool.Shutdown()
	entries, err := pool.Tools(t.Context(), s.ID, []mcpbridge.Server{mcpbridge.InProcess{Name: Name, Server: srv}})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]core.Tool{}
	var names []string
	for _, e := range entries {
		tools[e.Tool.Def().Name] = e.Tool
		names = append(names, e.Tool.Def().Name)
	}
	slices.Sort(names)
	if want := []string{"mcp_slack_add_reaction", "mcp_slack_get_user", "mcp_slack_post_message", "mcp_slack_read_thread"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v (search needs a user token)", names)
	}
	call := func(name string, input any) core.ToolResult {
		t.Helper()
		raw, _ := json.Marshal(input)
		res, err := tools[name].Call(t.Context(), core.ToolCall{SessionID: s.ID, ID: "toolu_1", Name: name, Input: raw})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tests := []struct {
		name    string
		tool    string
		input   any
		want    string
		isError bool
		check   func(t *testing.T)
	}{
		{"post in this thread", "mcp_slack_post_message", map[string]string{"text": "**progress**: half done"}, "posted to C0TL", false, func(t *testing.T) {
			th := r.fake.Thread("C0TL", m.TS)
			if last := th[len(th)-1]; last.Text != "*progress*: half done" || last.ThreadTS != m.TS {
				t.Fatalf("posted %+v", last)
			}
		}},
		{"react to the thread", "mcp_slack_add_reaction", map[string]string{"name": ":white_check_mark:"}, "reacted", false, func(t *testing.T) {
			got, _ := r.fake.Message("C0TL", m.TS)
			if !slices.Contains(got.Reacts, "white_check_mark") {
				t.Fatalf("reactions %v", got.Reacts)
			}
		}},
		{"read the thread", "mcp_slack_read_thread", map[string]any{}, "a reply in the thread", false, nil},
		{"get a user", "mcp_slack_get_user", map[string]string{"user": "<@U0ALICE>"}, "Alice Liddell", false, nil},
		{"unknown user", "mcp_slack_get_user", map[string]string{"user": "U0NOBODY"}, "user_not_found", true, nil},
		{"missing text", "mcp_slack_post_message", map[string]string{}, "text", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(tc.tool, tc.input)
			if res.IsError != tc.isError || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("result %+v", res)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
	t.Run("a channel outside the policy", func(t *testing.T) {
		in, _ := r.store.FindInstallation(t.Context(), Name, "T0TL")
		if _, err := r.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error {
			in.Policy.Channels = []string{"C0TL"}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if res := call("mcp_slack_post_message", map[string]string{"text": "hi", "channel": "C0SECRET"}); !res.IsError || !strings.Contains(res.Output, "channel policy") {
			t.Fatalf("posted outside the policy: %+v", res)
		}
		if n := len(r.fake.Channel("C0SECRET")); n != 0 {
			t.Fatalf("%d messages in the channel outside the policy", n)
		}
	})
	t.Run("no tools once uninstalled", func(t *testing.T) {
		in, _ := r.store.FindInstallation(t.Context(), Name, "T0TL")
		if err := r.p.forget(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if srv, err := r.p.ToolServer(t.Context(), s); err != nil || srv != nil {
			t.Fatalf("server %v, %v", srv, err)
		}
	})
}
