package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestOverview(t *testing.T) {
	e := newEnv(t, "")
	c, _ := e.signIn()

	empty := e.do(req{method: "GET", path: "/console/", cookie: c}).Body.String()
	for _, want := range []string{`id="no-sessions"`, `id="no-turns"`, "POST /v1/sessions"} {
		if !strings.Contains(empty, want) {
			t.Errorf("the empty overview lacks %q", want)
		}
	}
	now := e.clock.Now() // 07:30
	wantFrom := time.Date(2030, 5, 5, 8, 0, 0, 0, time.UTC)
	if e.store.statsFrom != wantFrom || e.store.statsTo != wantFrom.Add(24*time.Hour) {
		t.Fatalf("read hours [%v, %v)", e.store.statsFrom, e.store.statsTo)
	}

	e.store.counts = map[core.Status]int{core.StatusRunning: 3, core.StatusIdle: 40, core.StatusFailed: 2}
	e.store.hours = []core.HourStats{
		{Hour: now.Truncate(time.Hour).Add(-30 * time.Hour), Turns: 1000}, // outside the day
		{Hour: now.Truncate(time.Hour).Add(-2 * time.Hour), Turns: 10, Failed: 1, InputTokens: 500, OutputTokens: 50, CacheReadInputTokens: 4000, CostUSD: 0.1},
		{Hour: now.Truncate(time.Hour), Turns: 5, Failed: 2, InputTokens: 100, OutputTokens: 7, CacheCreationInputTokens: 30, CostUSD: 1.25},
	}
	body := e.do(req{method: "GET", path: "/console/", cookie: c}).Body.String()
	for _, want := range []string{
		`<span class="count" data-status="running">3</span>`,
		`<span class="count" data-status="idle">40</span>`,
		`<span class="count" data-status="queued">0</span>`,
		`href="sessions?status=failed"`,
		`<dd id="turns">15</dd>`, `<dd id="failed">3</dd>`, `<dd>600</dd>`, `<dd>57</dd>`,
		`<time datetime="2030-05-06T07:00:00Z">2030-05-06 07:00 UTC</time>`,
		`<meter min="0" max="10" value="5">`,
		// Cached tokens and the estimated cost, for the day and each hour.
		`<dd id="cached">4000 read, 30 written</dd>`, `<dd id="cost">$1.3500</dd>`,
		`<td>137</td><td>$1.2500</td>`, `<td>4550</td><td>$0.1000</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	if strings.Contains(body, "no-sessions") || strings.Contains(body, "no-turns") || strings.Contains(body, ">1000<") {
		t.Error("the overview shows an empty state, or an hour outside the day")
	}
	// The navigation names what exists and the page shown.
	if !strings.Contains(body, `<a href="./" aria-current="page">Overview</a>`) || !strings.Contains(body, `<a href="sessions">Sessions</a>`) {
		t.Error("the navigation is wrong")
	}
}

func session(i int, st core.Status) *core.Session {
	at := core.NewTime(time.Date(2030, 5, 6, 7, i, 0, 0, time.UTC))
	return &core.Session{
		ID: fmt.Sprintf("ses_%03d", i), Status: st, Agent: core.AgentRef{ID: "agt_a", Version: 3},
		Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1", TenantID: "slack:T1", URL: "https://example.slack.com/x"},
		Tenant: "slack:T1", CreatedAt: at, UpdatedAt: at,
	}
}

func TestSessionsPage(t *testing.T) {
	tests := []struct {
		name       string
		query      string
		list       core.SessionList
		wantFilter core.SessionFilter
		want       []string
		wantNot    []string
	}{
		{
			name:       "first page, more to come",
			list:       core.SessionList{Sessions: []*core.Session{session(1, core.StatusRunning), session(2, core.StatusIdle)}, HasMore: true, Next: "ses_002"},
			wantFilter: core.SessionFilter{Limit: 100},
			want: []string{
				`<a href="sessions/ses_001"><code>ses_001</code></a>`,
				`<tr data-session="ses_002">`,
				`<span class="status" data-status="running">running</span>`,
				`<time datetime="2030-05-06T07:01:00Z">2030-05-06 07:01 UTC</time>`,
				`href="sessions?after=ses_002" id="next"`,
				`id="live"`,
			},
			wantNot: []string{"First page", `id="capped"`},
		},
		{
			name:       "every filter, a later page",
			query:      "status=failed&provider=github&agent=agt_x&tenant=github%3Ao%2Fr&q=deploy+it&after=ses_050",
			list:       core.SessionList{Sessions: []*core.Session{session(51, core.StatusFailed)}, HasMore: true, Next: "ses_051"},
			wantFilter: core.SessionFilter{Status: core.StatusFailed, Provider: "github", AgentID: "agt_x", Tenant: "github:o/r", Text: "deploy it", After: "ses_050", Limit: 100},
			want: []string{
				`href="sessions?agent=agt_x&amp;provider=github&amp;q=deploy&#43;it&amp;status=failed&amp;tenant=github%3Ao%2Fr">First page`,
				`href="sessions?after=ses_051&amp;agent=agt_x&amp;provider=github&amp;q=deploy&#43;it&amp;status=failed&amp;tenant=github%3Ao%2Fr" id="next"`,
				`<option value="failed" selected>`, `<option value="github" selected>`,
				`value="deploy it"`,
			},
		},
		{
			name:       "a text filter that stopped at its cap",
			query:      "q=needle",
			list:       core.SessionList{HasMore: true, Next: "ses_9999", Capped: true},
			wantFilter: core.SessionFilter{Text: "needle", Limit: 100},
			want:       []string{`id="capped"`, "examining 10000 sessions", `href="sessions?after=ses_9999&amp;q=needle" id="next"`, `id="no-rows"`},
		},
		{
			name:       "nothing at all",
			list:       core.SessionList{},
			wantFilter: core.SessionFilter{Limit: 100},
			// The empty table is there, hidden, for sessions that arrive live.
			want:    []string{`id="no-rows">`, "once someone talks to an agent", `id="sessions-box" hidden`, `id="live"`},
			wantNot: []string{`id="next"`, `<tr data-session`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			c, _ := e.signIn()
			e.store.list = tt.list
			rec := e.do(req{method: "GET", path: "/console/sessions?" + tt.query, cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			n, filters := e.store.calls()
			if n != 1 || filters[0] != tt.wantFilter {
				t.Fatalf("%d list calls with %+v, want one with %+v", n, filters, tt.wantFilter)
			}
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the page has %q", w)
				}
			}
			if t.Failed() {
				t.Log(body)
			}
		})
	}
}

func TestSessionsPageBadFilter(t *testing.T) {
	for _, q := range []string{"status=sleeping", "provider=email", "q=" + strings.Repeat("x", 501)} {
		t.Run(q[:min(len(q), 20)], func(t *testing.T) {
			e := newEnv(t, "")
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/sessions?" + q, cookie: c})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `id="filter-error"`) {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if n, _ := e.store.calls(); n != 0 {
				t.Fatalf("%d list calls for a bad filter", n)
			}
		})
	}
}

func TestAssets(t *testing.T) {
	e := newEnv(t, "")
	for path, ct := range map[string]string{"console.css": "text/css", "console.js": "text/javascript", "favicon.svg": "image/svg+xml"} {
		rec := e.do(req{method: "GET", path: "/console/assets/" + path})
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ct) {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	if rec := e.do(req{method: "GET", path: "/console/assets/nope.js"}); rec.Code != http.StatusNotFound {
		t.Errorf("a missing asset: %d", rec.Code)
	}
	// Nothing in a page is inline: no style attribute, no inline script.
	c, _ := e.signIn()
	e.store.list = core.SessionList{Sessions: []*core.Session{session(1, core.StatusIdle)}}
	for _, p := range []string{"/console/sign-in", "/console/", "/console/sessions"} {
		ck := c
		if p == "/console/sign-in" {
			ck = nil
		}
		body := e.do(req{method: "GET", path: p, cookie: ck}).Body.String()
		if strings.Contains(body, "style=") || strings.Contains(body, "<style") || strings.Contains(body, "<script>") || strings.Contains(body, "onclick=") {
			t.Errorf("%s has inline style or script", p)
		}
	}
}

// TestNotFoundLeadsBack: a page that is not there says so, and its link
// back reaches the overview from any depth.
func TestNotFoundLeadsBack(t *testing.T) {
	e := newEnv(t, "")
	c, _ := e.signIn()
	for path, back := range map[string]string{
		"/console/nothing":      `href="./"`,
		"/console/nothing/here": `href=".././"`,
		"/console/a/b/c":        `href="../.././"`,
	} {
		t.Run(path, func(t *testing.T) {
			rec := e.do(req{method: "GET", path: path, cookie: c})
			if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `<a `+back+`>Back to the console</a>`) {
				t.Fatalf("%d, back link %s missing:\n%s", rec.Code, back, rec.Body)
			}
		})
	}
}
