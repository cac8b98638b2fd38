package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/fixtures/browser"
)

// consoleBrowser is headless chromium signed in to one gateway's console.
type consoleBrowser struct {
	t    *testing.T
	ctx  context.Context
	base string // the gateway's address
	// secrets are values no page may contain, checked on every page
	// read through html.
	secrets []string
}

// newConsoleBrowser starts chromium and signs in to srv's console through
// its form. Start it after the gateway, so that the browser (and its
// event streams) end first.
func newConsoleBrowser(t *testing.T, base string) *consoleBrowser {
	t.Helper()
	ctx := browser.New(t)
	// Bounds a hung browser; nothing here is timed.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancel)
	b := &consoleBrowser{t: t, ctx: ctx, base: base, secrets: []string{adminToken}}
	b.run("sign in",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), adminToken),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`#status-counts`)),
	)
	return b
}

func (b *consoleBrowser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %s: %v", what, err)
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
		png := read(b, "a screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, size.w)), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.run("back to a desktop's width", chromedp.EmulateViewport(1440, 900))
}
