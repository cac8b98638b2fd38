package main_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/fixtures/browser"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// front is the gateway as the browser sees it: a reverse proxy at a fixed
// address, as in production, so the test can drop the page's event stream
// in the two ways that happen there: the gateway restarts (the proxy
// answers 502 meanwhile and EventSource gives up, so the page resumes by
// itself with ?after=), or a connection breaks (EventSource reconnects,
// sending Last-Event-ID).
type front struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	target  *url.URL
	hold    chan struct{} // when set, new streams wait until it closes
	held    int           // streams waiting on hold
	cancels map[int]context.CancelFunc
	next    int
	streams []streamRequest // every stream request, in order
	refused int             // stream requests answered 502
}

// streamRequest is what a stream request asked to resume from.
type streamRequest struct {
	after, lastEventID string
}

func newFront(t *testing.T, target string) *front {
	f := &front{t: t, cancels: map[int]context.CancelFunc{}}
	f.retarget(target)
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) retarget(target string) {
	u, err := url.Parse(target)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.target = u
	f.mu.Unlock()
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	stream := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	f.mu.Lock()
	target := f.target
	var hold chan struct{}
	if stream {
		f.streams = append(f.streams, streamRequest{after: r.URL.Query().Get("after"), lastEventID: r.Header.Get("Last-Event-ID")})
		hold = f.hold
		if hold != nil {
			f.held++
		}
	}
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if stream {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		f.mu.Lock()
		id := f.next
		f.next++
		f.cancels[id] = cancel
		f.mu.Unlock()
		defer func() { f.mu.Lock(); delete(f.cancels, id); f.mu.Unlock() }()
		r = r.WithContext(ctx)
	}
	p := &httputil.ReverseProxy{
		Rewrite:  func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if stream {
				f.mu.Lock()
				f.refused++
				f.mu.Unlock()
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.ServeHTTP(w, r)
}

// cut breaks every open stream, as a network failure would.
func (f *front) cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.cancels {
		c()
	}
}

// holdStreams makes new streams wait until release.
func (f *front) holdStreams() {
	f.mu.Lock()
	f.hold, f.held = make(chan struct{}), 0
	f.mu.Unlock()
}

func (f *front) release() {
	f.mu.Lock()
	close(f.hold)
	f.hold = nil
	f.mu.Unlock()
}

func (f *front) state() (streams []streamRequest, held, refused int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.streams), f.held, f.refused
}

// waitFront polls the proxy's state until cond holds.
func (f *front) wait(what string, cond func(streams []streamRequest, held, refused int) bool) {
	f.t.Helper()
	for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Millisecond) {
		if cond(f.state()) {
			return
		}
		if time.Now().After(deadline) {
			s, h, r := f.state()
			f.t.Fatalf("timed out waiting for %s; streams %+v, held %d, refused %d", what, s, h, r)
		}
	}
}

// pageState is what the test reads of the page.
type pageState struct {
	Conn    string   `json:"conn"`
	Opens   int      `json:"opens"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason"`
	Seqs    []uint64 `json:"seqs"`
	Texts   []string `json:"texts"`
	Pending int      `json:"pending"`
}

const readPage = `(() => {
	const items = [...document.querySelectorAll('#log [data-seq]')];
	const conn = document.getElementById('conn');
	return {
		conn: conn.dataset.state,
		opens: Number(conn.dataset.opens),
		status: document.getElementById('status').dataset.status,
		reason: document.getElementById('stop-reason').textContent,
		seqs: items.map(e => Number(e.dataset.seq)),
		texts: items.map(e => e.dataset.type + ': ' + e.textContent),
		pending: document.querySelectorAll('#log .pending').length,
	};
})()`

func readState(t *testing.T, ctx context.Context) pageState {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	st, err := chromedp.Run(c, chromedp.Evaluate[pageState](readPage))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	return st
}

// waitPage polls the page until cond holds, or fails after patience with
// what the page shows.
func waitPage(t *testing.T, ctx context.Context, what string, cond func(pageState) bool) pageState {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		st := readState(t, ctx)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the page to show %s; it shows %+v", what, st)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func showsText(st pageState, typ, text string) bool {
	return slices.ContainsFunc(st.Texts, func(s string) bool { return strings.HasPrefix(s, typ+": ") && strings.Contains(s, text) })
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

// TestSessionPageLiveInBrowser drives the session page in headless
// chromium: a message sent from the page gets the model's answer on the
// page; then the page's stream is dropped twice, once by a gateway
// SIGKILL and restart and once by a broken connection, while inputs are
// queued through the API, and the page ends with every event of the log
// exactly once. Last, Stop interrupts a turn.
func TestSessionPageLiveInBrowser(t *testing.T) {
	ctx := browser.New(t)
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	fr := newFront(t, srv.url)

	created := createWithToken(t, srv, map[string]any{"agent": "default"})
	id := created.ID
	pageURL := fr.srv.URL + "/sessions/" + id + "?token=" + url.QueryEscape(created.ClientToken)

	start := time.Now()
	do(t, ctx, chromedp.Navigate(pageURL))
	waitPage(t, ctx, "a live stream", func(st pageState) bool { return st.Conn == "live" })
	t.Logf("page live after %v", time.Since(start))

	// A live turn, sent from the page.
	start = time.Now()
	ms.Push(modelserver.Step{Text: "The answer is 42."})
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#message"), "What is the answer?"),
		chromedp.Click(chromedp.CSS("#send-button")),
	)
	waitPage(t, ctx, "the answer", func(st pageState) bool {
		return showsText(st, "user.message", "What is the answer?") && showsText(st, "agent.message", "The answer is 42.") && st.Status == "idle"
	})
	t.Logf("sent from the page and answered in %v", time.Since(start))
	if got := ms.Requests(); len(got) != 1 || got[0].Messages[0].Content[0].Text != "What is the answer?" {
		t.Fatalf("the model saw %+v", got)
	}

	// Drop 1: the gateway dies. While it is down the proxy answers 502, so
	// EventSource gives up and the page must resume by itself.
	start = time.Now()
	_, _, refusedBefore := fr.state()
	srv.kill()
	waitPage(t, ctx, "the drop", func(st pageState) bool { return st.Conn != "live" })
	fr.wait("a refused reconnect", func(_ []streamRequest, _, refused int) bool { return refused > refusedBefore })
	streamsBefore, _, _ := fr.state()
	opensBefore := readState(t, ctx).Opens
	srv = srv.restart()
	fr.retarget(srv.url)
	ms.Push(modelserver.Step{Text: "Answered after the restart."})
	postMessage(t, srv, id, "Asked while the page was away.")
	st := waitPage(t, ctx, "the answer after the restart", func(st pageState) bool {
		return showsText(st, "agent.message", "Answered after the restart.") && st.Conn == "live"
	})
	if st.Opens <= opensBefore {
		t.Fatalf("the page did not reconnect: %+v", st)
	}
	streams, _, _ := fr.state()
	if r := streams[len(streamsBefore):]; !slices.ContainsFunc(r, func(s streamRequest) bool { return s.after != "" && s.after != "0" && s.lastEventID == "" }) {
		t.Fatalf("no stream resumed with ?after= after the restart: %+v", r)
	}
	t.Logf("resumed after SIGKILL and restart in %v", time.Since(start))

	// Drop 2: the connection breaks and the reconnect is held while a whole
	// turn happens, so everything it logs must come from the resumed
	// stream's history.
	start = time.Now()
	srv.waitIdle(id)
	opensBefore = readState(t, ctx).Opens
	fr.holdStreams()
	fr.cut()
	fr.wait("the page's reconnect", func(_ []streamRequest, held, _ int) bool { return held > 0 })
	ms.Push(modelserver.Step{Text: "Answered while the stream was down."})
	postMessage(t, srv, id, "Asked while the stream was down.")
	srv.waitIdle(id)
	if st := readState(t, ctx); showsText(st, "agent.message", "while the stream was down") {
		t.Fatalf("the page saw the turn while its stream was held: %+v", st)
	}
	fr.release()
	st = waitPage(t, ctx, "the turn logged while the stream was down", func(st pageState) bool {
		return showsText(st, "agent.message", "Answered while the stream was down.")
	})
	if st.Opens <= opensBefore {
		t.Fatalf("the page did not reconnect: %+v", st)
	}
	streams, _, _ = fr.state()
	if last := streams[len(streams)-1]; last.lastEventID == "" || last.lastEventID == "0" {
		t.Fatalf("the browser reconnected without Last-Event-ID: %+v", streams)
	}
	t.Logf("resumed after a broken connection in %v", time.Since(start))

	// Stop interrupts a running turn.
	start = time.Now()
	ms.Push(modelserver.Step{Hang: true})
	postMessage(t, srv, id, "Take your time.")
	waitRequests(t, ms, 4)
	waitPage(t, ctx, "the running turn", func(st pageState) bool { return st.Status == "running" })
	do(t, ctx, chromedp.Click(chromedp.CSS("#stop-button")))
	waitPage(t, ctx, "the interrupted turn", func(st pageState) bool { return st.Status == "idle" && st.Reason == "canceled" })
	t.Logf("stopped from the page in %v", time.Since(start))

	// The page shows each user- and progress-level event of the log exactly
	// once, in order: no duplicate from the resent history, no gap.
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
	var want []uint64
	for _, e := range evs {
		if e.Level != "internal" {
			want = append(want, e.Seq)
		}
	}
	st = waitPage(t, ctx, "the whole log", func(st pageState) bool { return len(st.Seqs) >= len(want) })
	if !slices.Equal(st.Seqs, want) {
		t.Fatalf("page shows seqs %v, the log has %v\npage: %q", st.Seqs, want, st.Texts)
	}
	if st.Pending != 0 {
		t.Fatalf("%d inputs still shown as pending", st.Pending)
	}
	if n := count(evs, "user.message"); n != 4 {
		t.Fatalf("%d user messages logged, want 4: %v", n, types(evs))
	}
}

func postMessage(t *testing.T, srv *server, id, text string) {
	t.Helper()
	code, raw := srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": text}}})
	if code != 202 {
		t.Fatalf("post message: %d %s", code, raw)
	}
}

// TestSessionPageAuth checks the page's answers without a browser.
func TestSessionPageAuth(t *testing.T) {
	// No model is called: the environment only creates the default agent.
	srv := startServer(t, t.TempDir(), modelEnv("http://127.0.0.1:1", modelserver.FormatAnthropic))
	mk := func() (string, string) {
		code, raw := srv.do("POST", "/v1/sessions", map[string]any{"agent": "default"})
		if code != 201 {
			t.Fatalf("create session: %d %s", code, raw)
		}
		var c struct {
			ID          string `json:"id"`
			ClientToken string `json:"client_token"`
		}
		mustJSON(t, raw, &c)
		return c.ID, c.ClientToken
	}
	one, tokOne := mk()
	two, _ := mk()
	get := func(path, bearer string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("GET", srv.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, c := range []struct {
		name, path, bearer string
		status             int
	}{
		{"client token", "/sessions/" + one + "?token=" + url.QueryEscape(tokOne), "", 200},
		{"admin token in the address", "/sessions/" + two + "?token=" + adminToken, "", 200},
		{"admin token in the header", "/sessions/" + two, adminToken, 200},
		{"no token", "/sessions/" + one, "", 401},
		{"wrong token", "/sessions/" + one + "?token=wrong", "", 401},
		{"other session's token", "/sessions/" + two + "?token=" + url.QueryEscape(tokOne), "", 404},
		{"unknown session", "/sessions/ses_nope?token=" + adminToken, "", 404},
		{"asset without a token", "/sessions/assets/page.js", "", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, hdr, body := get(c.path, c.bearer)
			if code != c.status {
				t.Fatalf("status %d, want %d: %s", code, c.status, body)
			}
			if code != 200 && !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
				t.Fatalf("refusal is %q, want plain text", hdr.Get("Content-Type"))
			}
			if hdr.Get("Referrer-Policy") != "no-referrer" || hdr.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") {
				t.Fatalf("security headers %v", hdr)
			}
			if strings.Contains(body, adminToken) || strings.Contains(body, tokOne) {
				t.Fatal("the answer contains a token")
			}
		})
	}
}

// TestSessionPageMarkdown is acceptance 5 of the first hour: the agent's
// Markdown is rendered, safely: **bold** is bold, <script> is text, a
// javascript: link is text while an https one is a link; a stopped turn
// is marked; the header names the agent and every time is in UTC.
func TestSessionPageMarkdown(t *testing.T) {
	ctx := browser.New(t)
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	answer := "## Findings\n\nThe fix is **bold** and *careful*: run `go test ./...`.\n\n" +
		"- <script>window.pwned = true</script>\n- [click me](javascript:window.pwned=true)\n\n" +
		"See [the docs](https://example.com/docs) and keep snake_case_names.\n\n```\nfunc main() {}\n```"
	ms.Push(modelserver.Step{Text: answer}, modelserver.Step{Hang: true})
	created := createWithToken(t, srv, map[string]any{"agent": "default", "input": "Review it."})
	srv.waitIdle(created.ID)
	// A second turn, stopped before it ends.
	postMessage(t, srv, created.ID, "And the rest?")
	waitRequests(t, ms, 2)
	if code, raw := srv.do("POST", "/v1/sessions/"+created.ID+"/events", map[string]any{"events": []map[string]any{{"type": "user.interrupt"}}}); code != 202 {
		t.Fatalf("interrupt: %d %s", code, raw)
	}
	srv.waitFor(created.ID, "the stopped turn", func(st sessionState, _ []event) bool { return st.Status == "idle" })

	do(t, ctx, chromedp.Navigate(srv.url+"/sessions/"+created.ID+"?token="+url.QueryEscape(created.ClientToken)))
	waitPage(t, ctx, "the stopped turn's mark", func(st pageState) bool { return st.Conn == "live" })
	type rendered struct {
		Strong, Em, Code, Heading, Pre string
		Scripts, JSLinks, Items        int
		Link, Text, Agent, Created     string
		Pwned, Stopped                 bool
	}
	deadline := time.Now().Add(patience)
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[rendered](`(() => {
			const log = document.getElementById('log');
			const msg = [...log.querySelectorAll('article .md')].find(e => e.textContent.includes('Findings'));
			if (!msg) return {};
			const q = s => { const e = msg.querySelector(s); return e ? e.textContent : ''; };
			const link = msg.querySelector('a[href^="https:"]');
			return {strong: q('strong'), em: q('em'), code: q('p code'), heading: q('h4'), pre: q('pre code'),
				scripts: log.querySelectorAll('script').length, jslinks: log.querySelectorAll('a[href^="javascript"]').length,
				items: msg.querySelectorAll('li').length, link: link ? link.href + ' ' + link.textContent : '', text: msg.textContent,
				agent: document.getElementById('agent-name') ? document.getElementById('agent-name').textContent : '',
				created: document.querySelector('header time').textContent,
				pwned: window.pwned === true, stopped: !!log.querySelector('article.interrupted')};
		})()`))
		if err == nil && got.Strong != "" && got.Stopped {
			if got.Strong != "bold" || got.Em != "careful" || got.Code != "go test ./..." || got.Heading != "Findings" || got.Pre != "func main() {}" {
				t.Errorf("Markdown rendered as %+v", got)
			}
			if got.Scripts != 0 || got.JSLinks != 0 || got.Pwned || !strings.Contains(got.Text, "<script>window.pwned = true</script>") ||
				!strings.Contains(got.Text, "[click me](javascript:window.pwned=true)") {
				t.Errorf("unsafe content was not kept as text: %+v", got)
			}
			if got.Items != 2 || got.Link != "https://example.com/docs the docs" || !strings.Contains(got.Text, "snake_case_names") {
				t.Errorf("lists, links and words: %+v", got)
			}
			if got.Agent != "default" || !strings.HasSuffix(got.Created, " UTC") {
				t.Errorf("header: agent %q, created %q", got.Agent, got.Created)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the answer and the stopped turn: %+v %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tokenSession is a session as its creation answers: its id and client
// token.
type tokenSession struct {
	ID          string `json:"id"`
	ClientToken string `json:"client_token"`
}

// createWithToken creates a session from body.
func createWithToken(t *testing.T, srv *server, body map[string]any) tokenSession {
	t.Helper()
	code, raw := srv.do("POST", "/v1/sessions", body)
	if code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	var s tokenSession
	mustJSON(t, raw, &s)
	return s
}
