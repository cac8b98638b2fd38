package console_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// sseEvent is one event of the stream: its name and data.
type sseEvent struct{ name, data string }

// readEvent reads up to the next event, skipping comments and fields that
// are not event or data.
func readEvent(t *testing.T, r *bufio.Reader) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read the stream: %v (so far %+v)", err, ev)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.name != "":
			return ev
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func TestEvents(t *testing.T) {
	e := newEnv(t, "")
	srv := httptest.NewServer(e.mux)
	t.Cleanup(srv.Close)
	c, csrf := e.signIn()

	open := func() (*http.Response, *bufio.Reader) {
		t.Helper()
		r, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/console/events", nil)
		r.AddCookie(c)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		checkHeaders(t, "events", resp)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return resp, bufio.NewReader(resp.Body)
	}
	_, r := open()
	// The answer has begun, so the stream is subscribed.
	e.store.Publish(
		core.Change{SessionID: "ses_1", Events: []core.Event{{Type: core.TypeTurnStarted}}}, // no status change: not sent
		core.Change{SessionID: "ses_1", Status: core.StatusRunning},
		core.Change{SessionID: "ses_2", Status: core.StatusIdle, Remote: true},
	)
	for _, want := range []sseEvent{
		{"status", `{"session":"ses_1","status":"running"}`},
		{"status", `{"session":"ses_2","status":"idle"}`},
	} {
		if got := readEvent(t, r); got != want {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
	// Changes the stream dropped are not replayed: the page is told to
	// read its rows again.
	e.store.LagAll()
	if got := readEvent(t, r); got.name != "lag" {
		t.Fatalf("after a lag: %+v", got)
	}
	// A sign-out ends the stream at its next heartbeat.
	if rec := e.do(req{method: "POST", path: "/console/sign-out", cookie: c, form: url.Values{"csrf": {csrf}}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", rec.Code)
	}
	if got := readEvent(t, r); got.name != "signed-out" {
		t.Fatalf("after the sign-out: %+v", got)
	}
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("the stream went on: %q", line)
	}
}
