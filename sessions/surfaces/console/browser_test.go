package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/browser"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// TestConsoleInBrowser drives the console in headless chromium: sign in
// through the form, read the overview, open the sessions page, and watch
// a row's status change live when the store commits one; a lag makes the
// page read its rows again. CSP violations fail the test (fixtures/browser).
func TestConsoleInBrowser(t *testing.T) {
	store := newFakeStore()
	store.counts = map[core.Status]int{core.StatusRunning: 1, core.StatusIdle: 1}
	store.hours = []core.HourStats{{Hour: time.Now().UTC().Truncate(time.Hour), Turns: 4, Failed: 1, InputTokens: 900, OutputTokens: 80}}
	store.list = core.SessionList{Sessions: []*core.Session{session(1, core.StatusRunning), session(2, core.StatusIdle)}}
	h, err := console.New(store, console.Config{AdminToken: token, Platforms: shipped(nil)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux, adminOnly(token, http.NewServeMux()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// After the server, so the browser and its event stream end first
	// (cleanups run last first) and the server's Close finds no open
	// stream.
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
	read := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}

	run("open the console",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(srv.URL+"/console/sessions"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
	)
	location := read("the address", chromedp.Location())
	if location != srv.URL+"/console/sign-in" {
		t.Fatalf("signed out, the console sent the browser to %s", location)
	}
	run("sign in",
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`#status-counts`)),
		// The script shows times in the browser's zone, the UTC text kept
		// as the title.
		chromedp.WaitVisible(chromedp.CSS(`#hours time[title$="UTC"]`)),
	)
	if turns := read("the turns", chromedp.Text(chromedp.CSS(`#turns`))); turns != "4" {
		t.Fatalf("the overview shows %q turns", turns)
	}

	run("open the sessions page",
		chromedp.Click(chromedp.CSS(`nav a[href="sessions"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-session="ses_002"] .status[data-status="idle"]`)),
	)
	store.Publish(core.Change{SessionID: "ses_002", Status: core.StatusRunning})
	run("the live status", chromedp.WaitVisible(chromedp.CSS(`tr[data-session="ses_002"] .status[data-status="running"]`)))
	text := read("the cell", chromedp.Text(chromedp.CSS(`tr[data-session="ses_002"] .status`)))
	if n, _ := store.calls(); n != 1 || text != "running" {
		t.Fatalf("after the live change: cell %q, %d list calls (want 1: no reload)", text, n)
	}

	// A lag: the page reads its rows again, in place.
	store.mu.Lock()
	store.list = core.SessionList{Sessions: []*core.Session{session(2, core.StatusFailed), session(3, core.StatusQueued)}}
	store.mu.Unlock()
	store.LagAll()
	run("the rows read again", chromedp.WaitVisible(chromedp.CSS(`tr[data-session="ses_003"] .status[data-status="queued"]`)))

	// A phone's width: nothing but the table's own box scrolls sideways.
	run("a phone's width",
		chromedp.EmulateViewport(375, 800),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#sessions`)),
	)
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Fatal("at 375 px the page is wider than the screen")
	}

	run("sign out",
		chromedp.Click(chromedp.CSS(`.sign-out button`)),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
	)
	if store.signInCount() != 0 {
		t.Fatal("the sign-out left the sign-in in the store")
	}
}
