package main_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestConsoleSessionLayout opens a session's console page on a desktop
// and on a phone: the conversation's first message is on the first
// screen, a tool call waiting for a confirmation is shown before it and
// whole without scrolling, the session's controls are a column beside
// the conversation on the desktop and folded on the phone, and nothing is
// wider than the screen.
func TestConsoleSessionLayout(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(mcpSrv.Close)
	ms, srv := toolsEnv(t)
	agent := srv.agent(map[string]any{
		"name":        "careful",
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	})
	// A conversation of a few turns, longer than a screen.
	answer := strings.Repeat("The plan has three parts, each with its owner and its date.\n", 8)
	ms.Push(modelserver.Step{Text: answer})
	talked := srv.startSession(agent, "plan the launch")
	srv.waitIdle(talked)
	for _, q := range []string{"and the budget?", "who signs it off?"} {
		ms.Push(modelserver.Step{Text: answer})
		srv.send(talked, q)
		srv.waitIdle(talked)
	}
	ms.Push(call("toolu_ask", "mcp_docs_echo", map[string]any{"text": "asked first"}), modelserver.Step{Text: "echoed"})
	asked := srv.startSession(agent, "echo something")
	srv.waitFor(asked, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})

	b := newConsoleBrowser(t, srv.url)
	// box is an element's place in the document (not the viewport), and
	// the viewport's size: a page that scrolled itself still counts from
	// its top.
	type box struct{ Top, Bottom, Height, Width float64 }
	place := func(sel string) box {
		t.Helper()
		return read(b, sel, chromedp.Evaluate[box](`(() => {
			const r = document.querySelector(`+"`"+sel+"`"+`).getBoundingClientRect();
			return {Top: r.top + scrollY, Bottom: r.bottom + scrollY, Height: innerHeight, Width: innerWidth};
		})()`))
	}
	const first = `#log article.event.actor-human`
	const allow = `li.call[data-tool-use-id="toolu_ask"]`
	for _, size := range []struct {
		w, h int64
		side bool // the controls beside the conversation, open
	}{{1440, 900, true}, {375, 812, false}} {
		b.run("resize", chromedp.EmulateViewport(size.w, size.h))

		b.open("sessions/"+talked, first)
		if m := place(first); m.Top >= m.Height {
			t.Errorf("%d px: the first message starts at %.0f px, below the first screen (%.0f px)", size.w, m.Top, m.Height)
		}
		if read(b, "the page's width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`)) {
			t.Errorf("%d px: the session page is wider than the screen", size.w)
		}
		open := read(b, "the controls", chromedp.Evaluate[bool](`document.getElementById('controls').open`))
		log, controls := place("#log"), place("#controls")
		beside := controls.Top < log.Bottom && read(b, "the columns", chromedp.Evaluate[bool](
			`document.getElementById('controls').getBoundingClientRect().left >= document.getElementById('log').getBoundingClientRect().right`))
		if open != size.side || beside != size.side {
			t.Errorf("%d px: the controls are open %v, beside the conversation %v; want %v", size.w, open, beside, size.side)
		}
		if !read(b, "the composer", chromedp.Evaluate[bool](`getComputedStyle(document.getElementById('composer')).position === 'sticky'`)) {
			t.Errorf("%d px: the composer does not stay in view", size.w)
		}

		b.open("sessions/"+asked, allow+` button[name=result][value=allow]`)
		// What waits is in the markup; the conversation is drawn by the
		// page's script afterwards: wait for it too.
		b.run("the first message", chromedp.WaitVisible(chromedp.CSS(first)))
		call, msg := place(allow), place(first)
		if call.Bottom > call.Height {
			t.Errorf("%d px: the call waiting for a confirmation ends at %.0f px, below the first screen (%.0f px)", size.w, call.Bottom, call.Height)
		}
		if call.Top > msg.Top {
			t.Errorf("%d px: the call waiting (%.0f px) is shown after the conversation (%.0f px)", size.w, call.Top, msg.Top)
		}
		// On a phone the controls' summary is above the conversation, but
		// below what waits.
		if folded := place("#controls"); !size.side && call.Top > folded.Top {
			t.Errorf("%d px: the call waiting (%.0f px) is shown after the controls (%.0f px)", size.w, call.Top, folded.Top)
		}
		if read(b, "the page's width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`)) {
			t.Errorf("%d px: the page with a call waiting is wider than the screen", size.w)
		}

		// The docs the console links to, in its frame.
		b.run("open the docs", chromedp.Navigate(srv.url+"/docs/console.md"), chromedp.WaitVisible(chromedp.CSS(`#doc h1`)))
		if read(b, "the page's width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`)) {
			t.Errorf("%d px: docs/console.md is wider than the screen", size.w)
		}
	}
}
