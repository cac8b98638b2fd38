package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// lostAnswer is a transport whose first request matching a method and
// path suffix reaches GitHub but whose answer is lost on the way back, as
// when a connection drops after GitHub acted: the caller cannot tell that
// the call took effect.
type lostAnswer struct {
	method, suffix string
	mu             sync.Mutex
	lost           bool
}

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	l.mu.Lock()
	lose := !l.lost && err == nil && req.Method == l.method && strings.HasSuffix(req.URL.Path, l.suffix)
	l.lost = l.lost || lose
	l.mu.Unlock()
	if lose {
		resp.Body.Close()
		return nil, errors.New("connection reset after the request was sent")
	}
	return resp, err
}

// sinkTurn appends one turn holding evs, as the harness would, and waits
// until the sink rendered it and let go.
func sinkTurn(t *testing.T, st core.Store, sink *output.Sink, id string, evs ...core.Event) {
	t.Helper()
	w := st
	tid := core.NewID(core.PrefixTurn)
	reqs := []core.AppendRequest{{TakeInputs: true, TurnID: tid, Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}}}
	for _, e := range evs {
		reqs = append(reqs, core.AppendRequest{TurnID: tid, Events: []core.Event{e}})
	}
	reqs = append(reqs, core.AppendRequest{TurnID: tid, Events: []core.Event{
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAfter(core.ReasonCompleted), StopReason: core.ReasonCompleted}),
	}})
	for _, req := range reqs {
		if _, err := w.Append(t.Context(), id, req); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !sink.Settled(t.Context()) {
		if time.Now().After(deadline) {
			t.Fatal("the sink did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStatusCommentOnce: the answer to the create of an issue's status
// comment is lost after GitHub made it; the retry adopts that comment
// (found by its marker) instead of making a second one, and the turn's end
// edits it in place.
func TestStatusCommentOnce(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	c := r.fake.AddComment("acme/widgets", 7, false, "alice", "@sb-agent look")
	if code := r.deliver("issue_comment", mention(900, 7, c, "@sb-agent look")); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", 7))
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.p.cfg
	cfg.Transport = &lostAnswer{method: http.MethodPost, suffix: "/issues/7/comments"}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := output.New(output.Config{Name: Name, Store: r.store, Renderer: p.Renderer(), RetryMin: 10 * time.Millisecond})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Stop(context.Background()) })

	sinkTurn(t, r.store, sink, s.ID, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "Mondays are fixed."}))

	var status, answers []int64
	for _, cm := range r.fake.Comments("acme/widgets", 7) {
		switch {
		case cm.User == "alice":
		case strings.Contains(cm.Body, "Mondays are fixed."):
			answers = append(answers, cm.ID)
		default:
			status = append(status, cm.ID)
			if !strings.HasPrefix(cm.Body, "✅") || cm.Edits != 1 {
				t.Errorf("status comment %d was not edited to the summary: %q (%d edits)", cm.ID, cm.Body, cm.Edits)
			}
		}
	}
	if len(status) != 1 || len(answers) != 1 {
		t.Fatalf("status comments %v and answers %v, want one of each", status, answers)
	}
}

// TestClassify: what the sink retries and what it gives up on. A refusal
// (a 4xx that is no rate limit) never heals, so retrying it would hold
// the session's output on one event for good; limits and outages heal.
func TestClassify(t *testing.T) {
	answer := func(status int, header ...string) *http.Response {
		h := http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: status, Header: h, Request: &http.Request{Method: "POST", URL: &url.URL{Path: "/x"}}}
	}
	refused := func(status int, header ...string) error {
		return &gh.ErrorResponse{Response: answer(status, header...), Message: "refused"}
	}
	tokenRefused := func(status int) error {
		he := &ghinstallation.HTTPError{Message: "could not get access_tokens", Response: answer(status)}
		return &url.Error{Op: "Post", URL: "https://api.github.com/repos/o/r/issues/1/comments",
			Err: fmt.Errorf("could not refresh installation id 1's token: %w", he)}
	}
	tests := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"not accessible by integration", refused(http.StatusForbidden), true},
		{"bad request", refused(http.StatusBadRequest), true},
		{"unprocessable", refused(http.StatusUnprocessableEntity), true},
		{"not found", refused(http.StatusNotFound), true},
		{"conflict", refused(http.StatusConflict), true},
		{"forbidden with retry-after", refused(http.StatusForbidden, "Retry-After", "30"), false},
		{"forbidden with the quota spent", refused(http.StatusForbidden, "X-RateLimit-Remaining", "0"), false},
		{"too many requests", refused(http.StatusTooManyRequests), false},
		{"server error", refused(http.StatusBadGateway), false},
		{"primary rate limit", &gh.RateLimitError{Response: answer(http.StatusForbidden)}, false},
		{"secondary rate limit", &gh.AbuseRateLimitError{Response: answer(http.StatusForbidden), RetryAfter: new(time.Duration)}, false},
		{"installation deleted", tokenRefused(http.StatusNotFound), true},
		{"installation suspended", tokenRefused(http.StatusForbidden), true},
		{"app jwt refused", tokenRefused(http.StatusUnauthorized), false},
		{"network", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: errors.New("connection refused")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify(t.Context(), tt.err)
			if err == nil || output.IsPermanent(err) != tt.permanent {
				t.Fatalf("classify(%v) = %v, want permanent %v", tt.err, err, tt.permanent)
			}
		})
	}

	// The fake's secondary limit, through go-github, is one to wait out.
	r := newInstallRig(t, nil)
	r.fake.SecondaryRateLimit(1)
	_, _, err := r.p.client(900).Issues.CreateComment(t.Context(), "acme", "widgets", 1, &gh.IssueComment{Body: gh.String("x")})
	var abuse *gh.AbuseRateLimitError
	if !errors.As(err, &abuse) || output.IsPermanent(classify(t.Context(), err)) {
		t.Fatalf("a secondary rate limit came back as %T %v", err, err)
	}
}

// TestReplyGoesToTheThreadStart: a mention in a reply inside a review
// thread is answered in that thread, as a reply to the comment that
// starts it (GitHub takes no reply to a reply).
func TestReplyGoesToTheThreadStart(t *testing.T) {
	r := newInstallRig(t, nil)
	root := r.fake.AddComment("acme/widgets", 6, true, "bob", "Is this right?")
	reply := r.fake.AddComment("acme/widgets", 6, true, "alice", "@sb-agent is it?")
	ev := reviewCommentEvent("@sb-agent is it?")
	ev.Installation.ID = gh.Int64(900)
	ev.Comment.ID, ev.Comment.InReplyTo = gh.Int64(reply), gh.Int64(root)
	d := decide(ev, identity{slug: "sb-agent", label: "sb-agent"})
	if d.act != actTrigger || d.ref.CommentID != reply {
		t.Fatalf("decision %+v", d)
	}
	if err := r.p.reply(t.Context(), d.ref, "It is."); err != nil {
		t.Fatal(err)
	}
	var answers []int64
	for _, c := range r.fake.Comments("acme/widgets", 6) {
		if c.Body == "It is." {
			answers = append(answers, c.InReplyTo)
		}
	}
	if len(answers) != 1 || answers[0] != root {
		t.Fatalf("the answer replies to %v, want the thread's first comment %d", answers, root)
	}
}

// TestDeletedStatusCommentIsForgotten: someone deleted the status
// comment; the turn's end cannot edit it, and the next turn must not
// keep trying to, so the sink lets go of it.
func TestDeletedStatusCommentIsForgotten(t *testing.T) {
	r := newInstallRig(t, nil)
	s := &core.Session{ID: "ses_gone", Origin: &core.Origin{Provider: Name, Key: sessionKey("acme", "widgets", 8), TenantID: "900"}}
	g := &ref{Kind: kindLabel, Installation: 900, Owner: "acme", Repo: "widgets", Number: 8, Login: "alice"}
	prior, _ := json.Marshal(sinkState{Reply: g, StatusComment: 424242}) // no such comment
	done := core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted})
	th := output.New(output.Config{Name: Name, Store: r.store, Renderer: r.p.Renderer()}).Thread(s, core.SinkPosition{State: prior})
	if _, err := r.p.Renderer().Render(t.Context(), th, done); !output.IsPermanent(err) {
		t.Fatalf("editing a deleted comment: %v, want a permanent error", err)
	}
	var st sinkState
	if err := json.Unmarshal(th.State, &st); err != nil {
		t.Fatal(err)
	}
	if st.StatusComment != 0 || st.Reply == nil {
		t.Fatalf("state after the failed edit: %+v", st)
	}
}

// TestSecondaryLimitWithoutRetryAfter: GitHub asks for at least a minute
// when a secondary limit names no wait; the sink's own backoff starts at
// a second, so the renderer waits it out itself.
func TestSecondaryLimitWithoutRetryAfter(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err := classify(ctx, &gh.AbuseRateLimitError{Response: &http.Response{StatusCode: http.StatusForbidden, Request: &http.Request{URL: &url.URL{}}}})
	if err == nil || output.IsPermanent(err) {
		t.Fatalf("classify = %v, want a retryable error", err)
	}
	if ctx.Err() == nil {
		t.Fatal("a secondary limit without Retry-After was not waited out")
	}
}
