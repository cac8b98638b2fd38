package console_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/fixtures/browser"
)

// TestSessionPageInBrowser: the session page renders its conversation
// from the relayed stream with the session page's script (a tool call and
// its output folded together, the turn's usage), a confirmation that
// arrives live gets Allow/Deny, and Allow posts the console's form.
func TestSessionPageInBrowser(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	f.set("pending_action", nil)
	f.set("last_seq", 0)
	f.set("usage", map[string]any{"input_tokens": 0, "output_tokens": 0})
	internal := func(seq int, typ, body string) map[string]any {
		ev := event(seq, typ, body)
		ev["level"], ev["actor"] = "internal", "system"
		return ev
	}
	user := event(1, "user.message", `{"text":"echo hi","attachments":[{"id":"att_1","name":"shot.png","kind":"image","size":3},{"name":"<b>big</b>.zip","kind":"file","size":9,"skipped":"over the limit"}]}`)
	user["level"], user["actor"] = "user", "human"
	f.sse = []map[string]any{
		user,
		event(2, "agent.tool_use", `{"tool_use_id":"toolu_x","name":"ls","input":{"path":"."}}`),
		event(3, "agent.tool_result", `{"tool_use_id":"toolu_x","output":"README.md","is_error":false}`),
		event(4, "agent.tool_use", `{"tool_use_id":"toolu_a","name":"mcp_docs_echo","input":{"text":"hi"}}`),
		internal(5, "turn.completed", `{"yield_reason":"requires_action","usage":{"input_tokens":100,"output_tokens":7},"pending_tool_use_ids":["toolu_a"]}`),
	}
	srv := httptest.NewServer(e.mux)
	t.Cleanup(srv.Close)
	tab := browser.New(t)
	// Bounds a hung browser; nothing here is timed.
	ctx, cancel := context.WithTimeout(tab, browser.HangBound)
	defer cancel()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browser.Dump(tab))
		}
	}
	run("sign in",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(srv.URL+"/console/sign-in"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`nav`)),
	)
	run("open the session", chromedp.Navigate(srv.URL+"/console/sessions/ses_1"))
	run("the stream is live", chromedp.WaitVisible(chromedp.CSS(`#conn[data-state="live"]`)))
	run("the folded call", chromedp.WaitVisible(chromedp.CSS(`#log article[data-tool-use-id="toolu_x"] details.call`)),
		chromedp.WaitReady(chromedp.CSS(`#log article[data-tool-use-id="toolu_x"] pre.output`)))
	run("the turn's usage", chromedp.WaitVisible(chromedp.CSS(`#log article.usage`)))
	run("the pending call's Allow", chromedp.WaitVisible(chromedp.CSS(`#pending-calls li[data-tool-use-id="toolu_a"] button[name="result"][value="allow"]`)))
	attached, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#log article .attachment')].map(e => e.className + ': ' + e.textContent)`))
	if err != nil || len(attached) != 2 || attached[0] != "attachment: 📎 shot.png" || attached[1] != "attachment skipped: 📎 <b>big</b>.zip — not read: over the limit" {
		t.Fatalf("the message's attachments: %q %v", attached, err)
	}
	usage, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#usage-in`)))
	if err != nil || usage != "100" {
		t.Fatalf("usage after the turn: %q %v", usage, err)
	}
	empty, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('no-pending').hidden`))
	if err != nil || !empty {
		t.Fatalf("the empty state is shown beside a pending call (%v)", err)
	}
	run("a phone's width", chromedp.EmulateViewport(375, 800))
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil || overflow {
		t.Fatalf("at 375 px the page is wider than the screen (%v)", err)
	}
	run("allow", chromedp.Click(chromedp.CSS(`#pending-calls button[value="allow"]`)))
	select {
	case <-f.postedOne:
	case <-ctx.Done():
		t.Fatal("Allow posted nothing")
	}
	if p := f.posted(); len(p) != 1 || strings.TrimSpace(p[0]) != `{"events":[{"type":"user.tool_confirmation","tool_use_id":"toolu_a","result":"allow"}]}` {
		t.Fatalf("Allow posted %q", p)
	}
}
