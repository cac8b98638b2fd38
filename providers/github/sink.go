package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// stopAction is the check run's Stop button, retryAction its Retry
// button once a turn failed or was stopped.
const (
	stopAction  = "stop"
	retryAction = "retry"
)

// renderer is the GitHub part of the output sink (providers/output drives
// it from the log, one event at a time, and saves its state).
//
// Exactly once: a comment is not idempotent, so before each one the
// renderer saves an intent and posts with the intent's key in a hidden
// marker. After a crash an unconfirmed intent is looked for among the
// comments before anything is posted again. Reactions (GitHub answers an
// existing one with 200), check run updates and comment edits are
// idempotent and are simply done again.
type renderer struct {
	p       *Provider
	mu      sync.Mutex
	reacted map[string]bool // input ids given 👀 in this process
}

// sinkState is the renderer's part of the sink position.
type sinkState struct {
	Reply         *ref           `json:"reply,omitempty"` // the latest trigger: where answers go
	CheckRun      int64          `json:"check_run,omitempty"`
	StatusComment int64          `json:"status_comment,omitempty"`
	Intent        *output.Intent `json:"intent,omitempty"`
	Tools         int            `json:"tools,omitempty"` // tool calls this turn
	// Title and Summary are the run's output as last set, Status the
	// status comment's text: a new plan is shown under them.
	Title   string           `json:"title,omitempty"`
	Summary string           `json:"summary,omitempty"`
	Status  string           `json:"status,omitempty"`
	Plan    []core.PlanEntry `json:"plan,omitempty"` // the turn's latest plan
	// Calls are the tool calls without a result yet, Asked the questions
	// posted about those waiting for approval (wait.go).
	Calls map[string]callRef  `json:"calls,omitempty"`
	Asked map[string]question `json:"asked,omitempty"`
	// Waiting: the turn waits for approval or a tool's result; Paused:
	// for a budget to be raised.
	Waiting bool `json:"waiting,omitempty"`
	Paused  bool `json:"paused,omitempty"`
}

func githubRef(e core.Event) *ref {
	if e.Type != core.TypeUserMessage {
		return nil
	}
	var b inputBody
	if e.Decode(&b) != nil || b.GitHub == nil {
		return nil
	}
	return b.GitHub
}

// first reports whether this process has not reacted to an input yet.
func (r *renderer) first(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reacted == nil || len(r.reacted) > 10_000 {
		r.reacted = map[string]bool{}
	}
	if r.reacted[id] {
		return false
	}
	r.reacted[id] = true
	return true
}

func (r *renderer) forget(id string) {
	r.mu.Lock()
	delete(r.reacted, id)
	r.mu.Unlock()
}

// Received reacts 👀 to inputs ahead of the turn.
func (r *renderer) Received(ctx context.Context, s *core.Session, inputs []core.Event) error {
	for _, e := range inputs {
		if g := githubRef(e); g != nil && r.first(e.ID) {
			if err := r.p.react(ctx, g); err != nil {
				r.forget(e.ID)
				return err
			}
		}
	}
	return nil
}

// react puts 👀 on the triggering comment; reviews and labels have none.
func (p *Provider) react(ctx context.Context, g *ref) error {
	c := p.client(g.Installation)
	var err error
	switch g.Kind {
	case kindIssueComment:
		_, _, err = c.Reactions.CreateIssueCommentReaction(ctx, g.Owner, g.Repo, g.CommentID, "eyes")
	case kindReviewComment:
		_, _, err = c.Reactions.CreatePullRequestCommentReaction(ctx, g.Owner, g.Repo, g.CommentID, "eyes")
	}
	return err
}

var rendered = map[string]bool{
	core.TypeUserMessage: true, core.TypeTurnStarted: true, core.TypeAgentToolUse: true,
	core.TypeAgentMessage: true, core.TypeError: true, core.TypeTurnCompleted: true,
	core.TypeAgentCustomToolUse: true, core.TypeAgentToolResult: true, core.TypeUserCustomToolResult: true,
	core.TypeUserToolConfirmation: true, core.TypeStatusChanged: true, core.TypeAgentPlan: true,
}

// Render renders one logged event onto the issue or PR.
func (r *renderer) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if !rendered[e.Type] || t.Session.Origin == nil {
		return false, nil
	}
	var st sinkState
	if len(t.State) > 0 {
		_ = json.Unmarshal(t.State, &st) // a state that does not decode starts afresh
	}
	acted, err := r.event(ctx, t, &st, e)
	err = classify(ctx, err)
	if output.IsPermanent(err) && e.Type == core.TypeTurnCompleted {
		// The run or the status comment is gone (someone deleted the
		// comment): forgotten, so the next turn makes its own instead of
		// editing it in vain for good.
		st.CheckRun, st.StatusComment = 0, 0
	}
	if raw, merr := json.Marshal(st); merr == nil {
		t.State = raw
	}
	return acted, err
}

func (r *renderer) event(ctx context.Context, t *output.Thread, st *sinkState, e core.Event) (bool, error) {
	p := r.p
	switch e.Type {
	case core.TypeUserMessage:
		g := githubRef(e)
		if g == nil {
			return false, nil
		}
		st.Reply = g
		if r.first(e.ID) {
			if err := p.react(ctx, g); err != nil {
				r.forget(e.ID)
				return true, err
			}
		}
		if g.PR && st.CheckRun == 0 {
			return true, p.createCheckRun(ctx, t, st, e.Seq)
		}
		return true, nil
	case core.TypeTurnStarted:
		st.Tools = 0
		if st.Reply == nil {
			return false, nil
		}
		if st.Reply.PR && st.CheckRun == 0 {
			if err := p.createCheckRun(ctx, t, st, e.Seq); err != nil {
				return true, err
			}
		}
		if !st.Reply.PR && st.StatusComment == 0 {
			return true, r.statusComment(ctx, t, st, e.Seq)
		}
		return true, r.working(ctx, st)
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if e.Decode(&b) != nil {
			return false, nil
		}
		st.call(b, e.Type == core.TypeAgentCustomToolUse)
		if e.Type == core.TypeAgentCustomToolUse || st.Reply == nil || st.CheckRun == 0 {
			return false, nil
		}
		st.Tools++
		return true, p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{
			Output: st.output("Working", fmt.Sprintf("Running `%s` (%d tool calls so far).", b.Name, st.Tools))})
	case core.TypeAgentToolResult, core.TypeUserCustomToolResult:
		var b core.ToolResultBody
		if e.Decode(&b) == nil {
			delete(st.Calls, b.ToolUseID)
			delete(st.Asked, b.ToolUseID)
		}
		return false, nil
	case core.TypeUserToolConfirmation:
		if st.Reply == nil {
			return false, nil
		}
		return r.settle(ctx, st, e)
	case core.TypeAgentPlan:
		var b core.PlanBody
		if e.Decode(&b) != nil || st.Reply == nil {
			return false, nil
		}
		st.Plan = b.Entries
		return true, r.showPlan(ctx, st)
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if e.Decode(&b) != nil || st.Reply == nil {
			return false, nil
		}
		switch {
		case b.PendingAction != nil && b.PendingAction.Budget == nil && len(b.PendingAction.ToolUseIDs) > 0:
			// The turn waits in itself for a person (an ACP agent's
			// permission request).
			return true, r.wait(ctx, t, st, b.PendingAction.ToolUseIDs)
		case b.Status == core.StatusRunning && (st.Waiting || st.Paused):
			return true, r.working(ctx, st)
		case b.Status == core.StatusIdle && st.Waiting:
			// Stopped while it waited between turns: no turn ends it.
			return true, r.end(ctx, st, b.StopReason)
		}
		return false, nil
	case core.TypeAgentMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil || e.Level != core.LevelUser || st.Reply == nil {
			return false, nil
		}
		if b.Kind == core.MessageKindBudget {
			if err := r.pause(ctx, st, b.Budget, b.Text); err != nil {
				return true, err
			}
		}
		return true, r.post(ctx, t, st, e.Seq, b.Text)
	case core.TypeError:
		var b core.ErrorBody
		if err := e.Decode(&b); err != nil || st.Reply == nil {
			return false, nil
		}
		return true, r.post(ctx, t, st, e.Seq, "⚠️ I ran into an error: "+clip(b.Message, 2000))
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if err := e.Decode(&b); err != nil || st.Reply == nil {
			return false, nil
		}
		if b.YieldReason == core.ReasonRequiresAction {
			// Not done: the session waits on the calls, and their answer
			// starts the next turn under the same run.
			return true, r.wait(ctx, t, st, b.PendingToolUseIDs)
		}
		return true, r.end(ctx, st, b.YieldReason)
	}
	return false, nil
}

// post posts an answer exactly once (output.PostOnce, the intent's key in
// a hidden marker in the body).
func (r *renderer) post(ctx context.Context, t *output.Thread, st *sinkState, seq uint64, text string) error {
	p, g := r.p, st.Reply
	key := t.Session.ID + ":" + strconv.FormatUint(seq, 10)
	marker := "<!-- switchboard:" + key + " -->"
	return t.PostOnce(ctx, st, &st.Intent, output.Post{
		Key: key, Point: "post",
		Find: func(ctx context.Context, in output.Intent) (bool, error) {
			id, err := p.marked(ctx, g, g.Kind == kindReviewComment, marker, markedSince(in))
			return id != 0, err
		},
		Do: func(ctx context.Context) error { return p.reply(ctx, *g, clip(text, 60000)+"\n\n"+marker) },
	})
}

// markedSince is when to look for a marked comment from: a little before
// its intent, for clocks that disagree.
func markedSince(in output.Intent) time.Time { return time.Unix(in.At, 0).Add(-time.Minute) }

// statusComment makes an issue's status comment exactly once, as post
// does an answer; after a crash between the create and the recorded
// position the comment made then is adopted, so later edits go to it and
// no second one appears.
func (r *renderer) statusComment(ctx context.Context, t *output.Thread, st *sinkState, seq uint64) error {
	p, g := r.p, st.Reply
	key := t.Session.ID + ":status:" + strconv.FormatUint(seq, 10)
	marker := "<!-- switchboard:" + key + " -->"
	return t.PostOnce(ctx, st, &st.Intent, output.Post{
		Key: key,
		Find: func(ctx context.Context, in output.Intent) (bool, error) {
			id, err := p.marked(ctx, g, false, marker, markedSince(in))
			st.StatusComment = id
			return id != 0, err
		},
		Do: func(ctx context.Context) error {
			st.Status = workingStatus
			c, _, err := p.client(g.Installation).Issues.CreateComment(ctx, g.Owner, g.Repo, g.Number,
				&gh.IssueComment{Body: gh.String(workingStatus + "\n\n" + marker)})
			st.StatusComment = c.GetID()
			return err
		},
	})
}

// marked is the id of the comment holding marker among the issue's (or,
// with review, the pull request's review) comments made since an
// intent; 0 when there is none.
func (p *Provider) marked(ctx context.Context, g *ref, review bool, marker string, since time.Time) (int64, error) {
	c := p.client(g.Installation)
	if review {
		opts := &gh.PullRequestListCommentsOptions{Since: since, ListOptions: gh.ListOptions{PerPage: 100}}
		return findMarked(marker, func(page int) ([]*gh.PullRequestComment, *gh.Response, error) {
			opts.Page = page
			return c.PullRequests.ListComments(ctx, g.Owner, g.Repo, g.Number, opts)
		})
	}
	opts := &gh.IssueListCommentsOptions{Since: &since, ListOptions: gh.ListOptions{PerPage: 100}}
	return findMarked(marker, func(page int) ([]*gh.IssueComment, *gh.Response, error) {
		opts.Page = page
		return c.Issues.ListComments(ctx, g.Owner, g.Repo, g.Number, opts)
	})
}

// findMarked pages through comments until one's body holds marker: its
// id, or 0.
func findMarked[C interface {
	GetBody() string
	GetID() int64
}](marker string, list func(page int) ([]C, *gh.Response, error)) (int64, error) {
	for page := 0; ; {
		cs, resp, err := list(page)
		if err != nil {
			return 0, err
		}
		for _, cm := range cs {
			if strings.Contains(cm.GetBody(), marker) {
				return cm.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		page = resp.NextPage
	}
}

// classify waits out GitHub's secondary rate limits (retried after) and
// marks errors no retry can fix as permanent: a 4xx other than a rate
// limit (a 403 "Resource not accessible by integration" stays one however
// often it is asked), and an installation token GitHub refuses because
// the installation is gone or suspended. Left retryable, each would hold
// the session's output on one event for good.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		d := abuse.GetRetryAfter()
		if abuse.RetryAfter == nil {
			d = time.Minute // GitHub: without a Retry-After, wait at least a minute
		}
		if d > 0 && d <= time.Minute {
			t := time.NewTimer(d) // the sink retries after its own backoff as well
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		return err
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return err
	}
	var resp *http.Response
	var er *gh.ErrorResponse
	var he *ghinstallation.HTTPError
	switch {
	case errors.As(err, &er):
		resp = er.Response
	case errors.As(err, &he):
		if he.Response == nil || he.Response.StatusCode != http.StatusNotFound && he.Response.StatusCode != http.StatusForbidden {
			return err // a 401 there is the App's key or clock, which can be fixed
		}
		resp = he.Response
	}
	if resp == nil || resp.StatusCode < 400 || resp.StatusCode >= 500 {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests,
		resp.Header.Get("Retry-After") != "", resp.Header.Get("X-RateLimit-Remaining") == "0":
		return err // a limit by another name: worth waiting for
	}
	return output.Permanent(err)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
