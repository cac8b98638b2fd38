package playground

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

func userText(s string) core.Message {
	return core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: s}}}
}

func TestDemoAnswer(t *testing.T) {
	called := []core.Message{
		userText("<@U0YOU>: what breaks on Mondays?"),
		{Role: core.RoleAssistant, Content: []core.Block{{Type: core.BlockToolUse, ToolUseID: "t1", Name: "mcp_slack_add_reaction", Input: json.RawMessage(`{"name":"eyes"}`)}}},
		{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockToolResult, ToolUseID: "t1", Output: "reacted :eyes:"}}},
	}
	tests := []struct {
		name     string
		req      modelserver.Request
		call     string   // the tool it calls, or ""
		say      []string // what its reply holds
		sayNot   []string
		wantArgs any
	}{
		{name: "a Slack message: a reaction", call: "mcp_slack_add_reaction", wantArgs: map[string]any{"name": "eyes"},
			req: modelserver.Request{Tools: []string{"mcp_slack_post_message", "mcp_slack_add_reaction"}, Messages: []core.Message{userText("@you: hi")}}},
		{name: "a pull request: a read of it", call: "mcp_github_get_issue",
			req: modelserver.Request{Tools: []string{"mcp_github_comment", "mcp_github_get_issue"}, Messages: []core.Message{userText("hi")}}},
		{name: "a merge request: a read of it", call: "mcp_gitlab_get_merge_request",
			req: modelserver.Request{Tools: []string{"mcp_gitlab_comment", "mcp_gitlab_get_merge_request"}, Messages: []core.Message{userText("hi")}}},
		{name: "a Linear session: its teams", call: "mcp_linear_list_teams",
			req: modelserver.Request{Tools: []string{"mcp_linear_get_issue", "mcp_linear_list_teams"}, Messages: []core.Message{userText("hi")}}},
		{name: "no platform tool: a reply at once", say: []string{"Scripted demo model", "“hello”"}, sayNot: []string{"I called"},
			req: modelserver.Request{Tools: []string{"bash"}, Messages: []core.Message{userText("hello")}}},
		{name: "the tool answered: the reply", say: []string{"Scripted demo model", "“what breaks on Mondays?”", "`mcp_slack_add_reaction`", "reacted :eyes:", "SWITCHBOARD_MODEL"}, sayNot: []string{"U0YOU"},
			req: modelserver.Request{Tools: []string{"mcp_slack_add_reaction"}, Messages: called}},
		{name: "the person's words after the gateway's context", say: []string{"“@octocat commented: please look”"}, sayNot: []string{"You were called"},
			req: modelserver.Request{Messages: []core.Message{userText("You were called on the pull request acme/widgets#1\n\n@octocat commented:\nplease look")}}},
		{name: "Linear's markup left out", say: []string{"“Widgets break”"}, sayNot: []string{"<title>"},
			req: modelserver.Request{Messages: []core.Message{userText(`<issue identifier="ENG-1"><title>Widgets break</title></issue>`)}}},
		{name: "a chat author's name left out", say: []string{"“hi there”"}, sayNot: []string{"@you"},
			req: modelserver.Request{Messages: []core.Message{userText("@you: hi there")}}},
		{name: "an edit's author note left out", say: []string{"“what about Tuesdays?”"}, sayNot: []string{"U0YOU", "edited"},
			req: modelserver.Request{Messages: []core.Message{userText("<@U0YOU> (edited an earlier message): what about Tuesdays?")}}},
		{name: "nothing said", say: []string{"Scripted demo model"}, sayNot: []string{"You wrote"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := demoAnswer(tt.req)
			if again := demoAnswer(tt.req); !reflect.DeepEqual(st, again) {
				t.Fatalf("two answers to one request differ:\n%+v\n%+v", st, again)
			}
			if tt.call != "" {
				if len(st.ToolCalls) != 1 || st.ToolCalls[0].Name != tt.call || st.Text != "" {
					t.Fatalf("answer %+v, want one call of %s", st, tt.call)
				}
				if tt.wantArgs != nil && !reflect.DeepEqual(st.ToolCalls[0].Input, tt.wantArgs) {
					t.Errorf("arguments %v, want %v", st.ToolCalls[0].Input, tt.wantArgs)
				}
				return
			}
			if len(st.ToolCalls) != 0 {
				t.Fatalf("answer calls %+v, want a reply", st.ToolCalls)
			}
			for _, s := range tt.say {
				if !strings.Contains(st.Text, s) {
					t.Errorf("the reply lacks %q:\n%s", s, st.Text)
				}
			}
			for _, s := range tt.sayNot {
				if strings.Contains(st.Text, s) {
					t.Errorf("the reply holds %q:\n%s", s, st.Text)
				}
			}
		})
	}
}
