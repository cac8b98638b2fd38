package main_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/fixtures/browser"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// consoleBrowser is headless chromium signed in to one gateway's console.
type consoleBrowser struct {
	t    *testing.T
	ctx  context.Context
	tab  context.Context // ctx without its bound, to read a failed page
	base string          // the gateway's address
	// secrets are values no page may contain, checked on every page
	// read through html.
	secrets []string
}

// newConsoleBrowser starts chromium and signs in to srv's console through
// its form. Start it after the gateway, so that the browser (and its
// event streams) end first.
func newConsoleBrowser(t *testing.T, base string) *consoleBrowser {
	t.Helper()
	tab := browser.New(t)
	// Bounds a hung browser; nothing here is timed.
	ctx, cancel := context.WithTimeout(tab, browser.HangBound)
	t.Cleanup(cancel)
	b := &consoleBrowser{t: t, ctx: ctx, tab: tab, base: base, secrets: []string{adminToken}}
	b.run("sign in",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminToken),
		chromedp.Submit(chromedp.CSS(`#token`)),
		// The overview: its tiles, or the empty state of a new gateway.
		chromedp.WaitVisible(chromedp.CSS(`#by-status`)),
	)
	return b
}

func (b *consoleBrowser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %s: %v\n%s", what, err, browser.Dump(b.tab))
	}
}

// open goes to the console page at path (below /console/) and waits for
// sel.
func (b *consoleBrowser) open(path, sel string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+"/console/"+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// html is the current page's markup, checked for secrets.
func (b *consoleBrowser) html() string {
	b.t.Helper()
	s := read(b, "the page", chromedp.OuterHTML(chromedp.CSS("html")))
	for _, secret := range b.secrets {
		if strings.Contains(s, secret) {
			b.t.Fatalf("a secret is in the page's HTML")
		}
	}
	return s
}

func (b *consoleBrowser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(read(b, sel, chromedp.Text(chromedp.CSS(sel))))
}

// read runs an action that returns a value.
func read[T any](b *consoleBrowser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("browser: read %s: %v", what, err)
	}
	return v
}

// screenshotsEnv names the folder scripts/screenshots asks for the
// console's pictures in; unset, nothing is written.
const screenshotsEnv = "SWITCHBOARD_SCREENSHOTS"

// shot looks at the current page at a desktop's and a phone's width:
// nothing may be wider than the screen (a wide table scrolls in its own
// box). With SWITCHBOARD_SCREENSHOTS set, it writes <name>-1440.png and
// <name>-375.png there.
func (b *consoleBrowser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv(screenshotsEnv)
	for _, size := range []struct{ w, h int64 }{{1440, 900}, {375, 812}} {
		b.run("resize to "+name, chromedp.EmulateViewport(size.w, size.h))
		wide := read(b, "the page's width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
		if wide {
			b.t.Errorf("%s: at %d px the page is wider than the screen", name, size.w)
		}
		if dir == "" {
			continue
		}
		// As tall as the page, so that what stays in view (the session
		// page's composer) is pictured where the page ends, not over it.
		tall := read(b, "the page's height", chromedp.Evaluate[int64](`document.documentElement.scrollHeight`))
		b.run("fit the page", chromedp.EmulateViewport(size.w, max(size.h, tall)))
		png := read(b, "a screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, size.w)), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.run("back to a desktop's width", chromedp.EmulateViewport(1440, 900))
}

// TestConsoleInBrowserEndToEnd drives the console in headless chromium
// against a real serve with the fakes (Slack, the model, an MCP server
// whose tool asks first, a webhook destination nobody answers): sign in;
// install a Slack workspace with the Install button; a signed mention's
// session appears in the list without a reload and goes running → idle;
// on its page a running turn is stopped, and on another a pending
// confirmation allowed; an agent is created and edited (version 2, the
// diff shown); a vault credential's value is in no page; a dead delivery
// is sent again; a schedule is made and paused. Every page is looked at on a desktop and a phone
// (scripts/screenshots keeps the pictures).
func TestConsoleInBrowserEndToEnd(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(mcpSrv.Close)
	rc := newHookReceiver(t)
	w := startSlackOAuth(t, map[string]string{
		"SWITCHBOARD_SANDBOX":                 "none",
		"SWITCHBOARD_WEBHOOK_HORIZON_SECONDS": "1",
		"SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS": "50",
	})
	srv := w.srv
	// A destination on a name that resolves to loopback: every delivery
	// is refused at connect time and ends dead.
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	if code, raw := srv.do("POST", "/v1/destinations", map[string]any{"url": "http://localhost:" + port + "/h", "types": []string{"agent.message"}}); code != 201 {
		t.Fatalf("destination: %d %s", code, raw)
	}
	b := newConsoleBrowser(t, srv.url)

	// Install a workspace through the button.
	b.open("installations", "#install-slack")
	w.fake.Approve(fakeslack.Grant{Team: fakeslack.Team{ID: "T0CON", Name: "Console Co"}, Installer: "U0ADMIN"})
	b.run("install Slack",
		chromedp.Click(chromedp.CSS("#install-slack")),
		// The gateway's callback page, outside the console.
		chromedp.WaitVisible(chromedp.CSS(`body:not(:has(header)) h1`)),
	)
	if h := b.text("h1"); h != "Installed" {
		t.Fatalf("the install ended on %q", h)
	}
	team := w.teamByID("T0CON")
	w.team = team
	b.open("installations", `tr[data-installation]`)
	if !strings.Contains(b.html(), "Console Co") {
		t.Fatal("the installations page does not show the workspace")
	}
	b.shot("installations")
	b.run("open the installation", chromedp.Click(chromedp.CSS(`tr[data-installation] a[id^="edit-"]`)), chromedp.WaitVisible(chromedp.CSS("#installation-form")))
	b.shot("installation")

	// A mention: its session appears in the open list, running, then idle.
	release := holdAnswer(t, w.ms)
	w.ms.Push(modelserver.Step{Text: "the launch plan is ready"})
	b.open("sessions", `#live[data-state="live"]`)
	b.run("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	m := w.fake.Human("T0CON", "C0LAUNCH", "U0ALICE", "<@"+team.BotUserID+"> plan the launch", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	b.run("the session appears, running", chromedp.WaitVisible(chromedp.CSS(`tr[data-session] .status[data-status="running"]`)))
	release()
	b.run("the session goes idle", chromedp.WaitVisible(chromedp.CSS(`tr[data-session] .status[data-status="idle"]`)))
	if !read(b, "the mark", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
		t.Fatal("the sessions page was reloaded")
	}
	w.waitReply(team, "C0LAUNCH", m.TS, "the launch plan is ready")
	sid := w.session("T0CON", "C0LAUNCH", m.TS)
	b.shot("sessions")

	// Stop a running turn from the session's page.
	w.ms.Push(modelserver.Step{Text: "thinking…", Hang: true})
	asks := len(w.ms.Requests())
	m2 := w.fake.Human("T0CON", "C0LAUNCH", "U0ALICE", "<@"+team.BotUserID+"> and the budget?", m.TS)
	if code, _ := w.event(fakeslack.Mention(m2)); code != 200 {
		t.Fatalf("second mention: %d", code)
	}
	// The row is clicked by the page's own script, in one step: the live
	// table may put fresh rows in place of the ones a query found (a
	// reload after a lag or a reconnect, likelier on a busy machine), and a
	// click on a row taken out of the page would wait for it for ever.
	link := `tr[data-session="` + sid + `"] a`
	b.run("open the session",
		chromedp.WaitVisible(chromedp.CSS(link)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('`+link+`').click()`),
		chromedp.WaitVisible(chromedp.CSS(`#session[data-session="`+sid+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#conn[data-state="live"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#stop-button`)),
	)
	// Stopped before its model call, the turn would leave the hanging
	// step to the next session's.
	waitRequests(t, w.ms, asks+1)
	b.run("stop the turn", chromedp.Click(chromedp.CSS(`#stop-button`)), chromedp.WaitVisible(chromedp.CSS(`#status[data-status="idle"]`)))
	_, evs := srv.waitIdle(sid)
	if !slices.ContainsFunc(evs, func(e event) bool {
		return e.Type == "turn.completed" && strings.Contains(string(e.Body), `"canceled"`)
	}) {
		t.Fatalf("no turn ended canceled after Stop: %v", types(evs))
	}
	b.shot("session")

	// Allow a pending confirmation.
	careful := srv.agent(map[string]any{
		"name":        "careful",
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	})
	w.ms.Push(call("toolu_allow", "mcp_docs_echo", map[string]any{"text": "allowed by the console"}), modelserver.Step{Text: "echoed"})
	asked := srv.startSession(careful, "echo something")
	b.open("sessions/"+asked, `li.call[data-tool-use-id="toolu_allow"] button[name=result][value=allow]`)
	b.shot("session-confirmation")
	b.run("allow the call",
		chromedp.Click(chromedp.CSS(`li.call[data-tool-use-id="toolu_allow"] button[name=result][value=allow]`)),
		chromedp.WaitVisible(chromedp.CSS(`#status[data-status="idle"]`)),
	)
	_, evs = srv.waitIdle(asked)
	if out, isErr := result(t, evs, "toolu_allow"); isErr || !strings.Contains(out, "allowed by the console") {
		t.Fatalf("the allowed call: %q error=%v", out, isErr)
	}

	// Create an agent, edit it: version 2, and the diff shows the change.
	b.open("agents/new", "#agent-form")
	b.run("create an agent",
		chromedp.SendKeys(chromedp.CSS("#agent-name"), "triage"),
		chromedp.SendKeys(chromedp.CSS("#agent-model"), "anthropic/claude-test"),
		chromedp.SendKeys(chromedp.CSS("#agent-system"), "You sort incoming bugs."),
		chromedp.Click(chromedp.CSS("#agent-save")),
		chromedp.WaitVisible(chromedp.CSS("#agent-id")),
	)
	agentID := b.text("#agent-id")
	b.run("edit it",
		chromedp.SetValue(chromedp.CSS("#agent-system"), "You sort incoming bugs by severity."),
		chromedp.Click(chromedp.CSS("#agent-save")),
		chromedp.WaitVisible(chromedp.CSS(`#version-pins tr[data-version="2"]`)),
	)
	b.shot("agent")
	var agent struct{ Version int }
	code, raw := srv.do("GET", "/v1/agents/"+agentID, nil)
	mustJSON(t, raw, &agent)
	if code != 200 || agent.Version != 2 {
		t.Fatalf("after the edit: %d, version %d", code, agent.Version)
	}
	b.open("agents/"+agentID+"/diff", "#agent-diff")
	if diff := b.text("#diff-system"); !strings.Contains(diff, "by severity") {
		t.Fatalf("the diff does not show the new prompt: %q", diff)
	}
	b.shot("agent-diff")
	b.open("agents", "#agents")
	b.shot("agents")

	// A vault credential: its value is in no page.
	const secret = "registry-token-5f1d9a7c"
	b.secrets = append(b.secrets, secret)
	b.open("vaults", "#vault-create")
	b.run("create a vault",
		chromedp.SendKeys(chromedp.CSS("#vault-name"), "deploy"),
		chromedp.Click(chromedp.CSS(`#vault-create button[name=create]`)),
		chromedp.WaitVisible(chromedp.CSS("#vault-id")),
	)
	b.run("create a credential",
		chromedp.Click(chromedp.CSS(`details:has(#credential-static_bearer) > summary`)),
		chromedp.SendKeys(chromedp.CSS("#credential-static_bearer-name"), "registry"),
		chromedp.SendKeys(chromedp.CSS("#credential-static_bearer-hosts"), "registry.example.com"),
		chromedp.SendKeys(chromedp.CSS("#credential-static_bearer-token"), secret),
		chromedp.Click(chromedp.CSS(`#credential-static_bearer button[name=create]`)),
		chromedp.WaitVisible(chromedp.CSS(`#credentials [id^="cred-"]`)),
	)
	_ = b.html()
	b.shot("vault")
	b.open("vaults", "#vaults")
	_ = b.html()
	b.shot("vaults")

	// A dead delivery, sent again.
	var dead []deliveryView
	waitUntil(t, "a dead delivery", func() bool { dead = srv.deliveries("state=dead"); return len(dead) > 0 })
	before := dead[0]
	b.open("webhooks", `#dead tr[data-delivery="`+before.ID+`"]`)
	b.shot("webhooks")
	b.run("redeliver",
		chromedp.Click(chromedp.CSS(`#dead tr[data-delivery="`+before.ID+`"] button[name=redeliver]`)),
		chromedp.WaitVisible(chromedp.CSS(`#delivery-state`)),
	)
	waitUntil(t, "the delivery's new attempt", func() bool {
		var d deliveryView
		code, raw := srv.do("GET", "/v1/deliveries/"+before.ID, nil)
		mustJSON(t, raw, &d)
		return code == 200 && d.AttemptCount > before.AttemptCount
	})
	b.shot("delivery")

	// A schedule made with the form, then paused.
	b.open("schedules", "#schedule-form")
	b.run("create a schedule",
		chromedp.SendKeys(chromedp.CSS("#schedule-cron"), "30 2 * * 1-5"),
		chromedp.SetValue(chromedp.CSS("#schedule-zone"), "Europe/Berlin"),
		chromedp.SendKeys(chromedp.CSS("#schedule-target"), "default"),
		chromedp.SendKeys(chromedp.CSS("#schedule-input"), "Summarise yesterday's failed sessions."),
		chromedp.Click(chromedp.CSS("#schedule-create")),
		chromedp.WaitVisible(chromedp.CSS(`#schedules form[action$="/pause"]`)),
	)
	b.shot("schedules")
	if target := b.text(`#schedules tbody tr td:nth-child(2)`); !strings.Contains(target, "new session of default") {
		t.Errorf("the schedule's target reads %q, want the agent's name", target)
	}
	b.run("pause it",
		chromedp.Click(chromedp.CSS(`#schedules form[action$="/pause"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules form[action$="/resume"]`)),
	)
	var scheduled struct {
		Data []struct {
			Cron     string `json:"cron"`
			TimeZone string `json:"time_zone"`
			Paused   bool   `json:"paused"`
		} `json:"data"`
	}
	code, raw = srv.do("GET", "/v1/schedules", nil)
	mustJSON(t, raw, &scheduled)
	if code != 200 || len(scheduled.Data) != 1 || scheduled.Data[0].Cron != "30 2 * * 1-5" || scheduled.Data[0].TimeZone != "Europe/Berlin" || !scheduled.Data[0].Paused {
		t.Fatalf("the console's schedule: %d %s", code, raw)
	}

	// The other pages, as they are: each readable at both widths, none
	// holding a secret.
	for name, sel := range map[string]string{
		"overview":     "#status-counts",
		"skills":       "#skill-upload",
		"memory":       "#memory-store-create",
		"environments": "#new-environment",
	} {
		path := name
		if name == "overview" {
			path = ""
		}
		b.open(path, sel)
		_ = b.html()
		b.shot(name)
	}
	b.run("sign out", chromedp.Click(chromedp.CSS(`.sign-out button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	b.shot("sign-in")
}
