package main_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestConsoleSession drives a session through the console's session
// page against serve: an ask-first tool call is allowed with the page's
// form and the turn finishes with the tool's output; the page's stream
// relays the log; a running turn is stopped with the page's Stop form.
func TestConsoleSession(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	ms, srv := toolsEnv(t)
	agent := srv.agent(map[string]any{
		"name":        "careful",
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	})
	cookie := consoleSignIn(t, srv.url)
	page := srv.url + "/console/sessions/"

	ms.Push(call("toolu_allow", "mcp_docs_echo", map[string]any{"text": "allowed"}), modelserver.Step{Text: "echoed"})
	id := srv.startSession(agent, "echo something")
	srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})

	code, body := consoleGet(t, page+id, cookie)
	for _, want := range []string{
		`<li class="call" data-tool-use-id="toolu_allow">`,
		`<strong>Tool mcp_docs_echo</strong>`,
		`<button type="submit" name="result" value="allow">Allow</button>`,
	} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("session page: %d, lacks %s:\n%s", code, want, body)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if csrf == nil {
		t.Fatal("no CSRF token on the session page")
	}
	allow := url.Values{"tool_use_id": {"toolu_allow"}, "result": {"allow"}}
	if code, _ := consolePost(t, page+id+"/confirm", cookie, allow); code != http.StatusForbidden {
		t.Fatalf("Allow without CSRF: %d, want 403", code)
	}
	allow.Set("csrf", csrf[1])
	if code, _ := consolePost(t, page+id+"/confirm", cookie, allow); code != http.StatusSeeOther {
		t.Fatalf("Allow: %d, want 303", code)
	}
	_, evs := srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_allow"); isErr || !strings.Contains(out, "allowed") {
		t.Fatalf("allowed call: %q error=%v", out, isErr)
	}
	if n := count(evs, "user.tool_confirmation"); n != 1 {
		t.Fatalf("%d confirmations logged, want 1", n)
	}
	if _, body := consoleGet(t, page+id, cookie); strings.Contains(body, `data-tool-use-id="toolu_allow"`) {
		t.Fatal("the page still offers the answered call")
	}

	t.Run("stream", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), patience)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", page+id+"/stream?after=0", nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// The history comes first: read up to the allowed call's result.
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before the tool result: %v", err)
			}
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"type":"agent.tool_result"`) && strings.Contains(line, "toolu_allow") {
				break
			}
		}
	})

	t.Run("stop", func(t *testing.T) {
		before := len(ms.Requests())
		release := holdAnswer(t, ms)
		defer release()
		ms.Push(modelserver.Step{Text: "too late"})
		srv.send(id, "take your time")
		waitRequests(t, ms, before+1)
		srv.waitFor(id, "running", func(st sessionState, _ []event) bool { return st.Status == "running" })
		_, body := consoleGet(t, page+id, cookie)
		if !strings.Contains(body, `<form id="stop" method="post" action="`+id+`/stop">`) {
			t.Fatalf("no Stop form while the turn runs:\n%s", body)
		}
		if code, _ := consolePost(t, page+id+"/stop", cookie, url.Values{"csrf": {csrf[1]}}); code != http.StatusSeeOther {
			t.Fatalf("Stop: %d, want 303", code)
		}
		st, evs := srv.waitFor(id, "the turn stopped", func(st sessionState, _ []event) bool {
			return st.Status == "idle" && st.StopReason != nil && *st.StopReason == "canceled"
		})
		if count(evs, "user.interrupt") != 1 {
			t.Fatalf("session %+v, log %v", st, types(evs))
		}
	})
}
