package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/output"
)

var _ providers.OutputSink = (*Provider)(nil)

// Renderer is the output sink's GitLab part.
func (p *Provider) Renderer() output.Renderer { return &renderer{p: p} }

// renderer is the GitLab part of the output sink (providers/output drives
// it from the log, one event at a time, and saves its state).
//
// Exactly once: a note is not idempotent, so before each one the
// renderer saves an intent and posts with the intent's key in a hidden
// marker. After a crash an unconfirmed intent is looked for among the
// thread's notes before anything is posted again. Award emoji (GitLab
// refuses a second one of a name from the same user) and commit statuses
// (one per commit and name, replaced) are simply set again.
type renderer struct {
	p       *Provider
	mu      sync.Mutex
	awarded map[string]bool // input ids given 👀 in this process
}

// sinkState is the renderer's part of the sink position.
type sinkState struct {
	Reply  *ref           `json:"reply,omitempty"` // the latest trigger: where answers go
	Intent *output.Intent `json:"intent,omitempty"`
	// Calls are the tool calls without a result yet, by id → tool name,
	// and Args their arguments (clipped); Asked the ones a note asked a
	// person about.
	Calls map[string]string `json:"calls,omitempty"`
	Args  map[string]string `json:"args,omitempty"`
	Asked map[string]bool   `json:"asked,omitempty"`
	// State and Description are the commit status as last set.
	State       string `json:"state,omitempty"`
	Description string `json:"description,omitempty"`
}

func gitlabRef(e core.Event) *ref {
	if e.Type != core.TypeUserMessage {
		return nil
	}
	var b inputBody
	if e.Decode(&b) != nil || b.GitLab == nil {
		return nil
	}
	return b.GitLab
}

// first reports whether this process has not awarded an input yet.
func (r *renderer) first(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.awarded == nil || len(r.awarded) > 10_000 {
		r.awarded = map[string]bool{}
	}
	if r.awarded[id] {
		return false
	}
	r.awarded[id] = true
	return true
}

// Received awards 👀 to the notes of inputs ahead of the turn.
func (r *renderer) Received(ctx context.Context, _ *core.Session, inputs []core.Event) error {
	for _, e := range inputs {
		if g := gitlabRef(e); g != nil && r.first(e.ID) {
			if err := r.p.award(ctx, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// award puts 👀 on the triggering note; a label has none. GitLab answers
// a second award of the same emoji with 404 "has already been taken",
// which is the award made.
func (p *Provider) award(ctx context.Context, g *ref) error {
	if g.NoteID == 0 {
		return nil
	}
	c, err := p.refClient(ctx, *g)
	if err != nil {
		return err
	}
	opt := &gl.CreateAwardEmojiOptions{Name: "eyes"}
	var resp *gl.Response
	if g.Kind == kindMR {
		_, resp, err = c.AwardEmoji.CreateMergeRequestAwardEmojiOnNote(g.ProjectID, g.IID, g.NoteID, opt, gl.WithContext(ctx))
	} else {
		_, resp, err = c.AwardEmoji.CreateIssuesAwardEmojiOnNote(g.ProjectID, g.IID, g.NoteID, opt, gl.WithContext(ctx))
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound && strings.Contains(err.Error(), "already been taken") {
		return nil
	}
	return err
}

var rendered = map[string]bool{
	core.TypeUserMessage: true, core.TypeTurnStarted: true, core.TypeAgentToolUse: true,
	core.TypeAgentMessage: true, core.TypeError: true, core.TypeTurnCompleted: true,
	core.TypeAgentCustomToolUse: true, core.TypeAgentToolResult: true, core.TypeUserCustomToolResult: true,
	core.TypeStatusChanged: true, core.TypeAgentPlan: true,
}

// Render renders one logged event onto the issue or merge request.
func (r *renderer) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if !rendered[e.Type] || t.Session.Origin == nil {
		return false, nil
	}
	var st sinkState
	if len(t.State) > 0 {
		_ = json.Unmarshal(t.State, &st) // a state that does not decode starts afresh
	}
	acted, err := r.event(ctx, t, &st, e)
	if raw, merr := json.Marshal(st); merr == nil {
		t.State = raw
	}
	return acted, classify(err)
}

func (r *renderer) event(ctx context.Context, t *output.Thread, st *sinkState, e core.Event) (bool, error) {
	p := r.p
	switch e.Type {
	case core.TypeUserMessage:
		g := gitlabRef(e)
		if g == nil {
			return false, nil
		}
		st.Reply = g
		if r.first(e.ID) {
			return true, p.award(ctx, g)
		}
		return false, nil
	case core.TypeTurnStarted:
		return st.Reply != nil, p.setStatus(ctx, t, st, gl.Running, "Working")
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if e.Decode(&b) != nil {
			return false, nil
		}
		if st.Calls == nil {
			st.Calls = map[string]string{}
		}
		st.Calls[b.ToolUseID] = b.Name
		if st.Args == nil {
			st.Args = map[string]string{}
		}
		st.Args[b.ToolUseID] = clip(string(b.Input), 1000)
		if e.Type == core.TypeAgentCustomToolUse {
			return false, nil
		}
		return st.Reply != nil, p.setStatus(ctx, t, st, gl.Running, "Running "+b.Name)
	case core.TypeAgentToolResult, core.TypeUserCustomToolResult:
		var b core.ToolResultBody
		if e.Decode(&b) == nil {
			delete(st.Calls, b.ToolUseID)
			delete(st.Args, b.ToolUseID)
			delete(st.Asked, b.ToolUseID)
		}
		return false, nil
	case core.TypeAgentPlan:
		var b core.PlanBody
		if e.Decode(&b) != nil {
			return false, nil
		}
		return st.Reply != nil, p.setStatus(ctx, t, st, gl.Running, planLine(b.Entries))
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if e.Decode(&b) != nil || st.Reply == nil {
			return false, nil
		}
		if b.PendingAction != nil && b.PendingAction.Budget == nil && len(b.PendingAction.ToolUseIDs) > 0 {
			// The turn waits in itself for a person (an ACP agent's
			// permission request).
			return true, r.ask(ctx, t, st, b.PendingAction.ToolUseIDs)
		}
		return false, nil
	case core.TypeAgentMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil || e.Level != core.LevelUser || st.Reply == nil {
			return false, nil
		}
		return true, r.post(ctx, t, st, strconv.FormatUint(e.Seq, 10), b.Text)
	case core.TypeError:
		var b core.ErrorBody
		if err := e.Decode(&b); err != nil || st.Reply == nil {
			return false, nil
		}
		return true, r.post(ctx, t, st, strconv.FormatUint(e.Seq, 10), "⚠️ I ran into an error: "+clip(b.Message, 2000)+
			"\n\nReply `@"+p.appUser()+" retry` to run the turn again.")
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if err := e.Decode(&b); err != nil || st.Reply == nil {
			return false, nil
		}
		if b.YieldReason == core.ReasonRequiresAction {
			return true, r.ask(ctx, t, st, b.PendingToolUseIDs)
		}
		state, text := endState(b.YieldReason)
		return true, p.setStatus(ctx, t, st, state, text)
	}
	return false, nil
}

// endState is the commit status a turn's end shows.
func endState(reason core.Reason) (gl.BuildStateValue, string) {
	switch reason {
	case core.ReasonCompleted, core.ReasonNeedsInput:
		return gl.Success, "Done"
	case core.ReasonCanceled:
		return gl.Canceled, "Stopped"
	case core.ReasonBudgetExceeded, core.ReasonMaxTurns:
		return gl.Canceled, "Paused: " + string(reason)
	}
	return gl.Failed, "Ended: " + string(reason)
}

// planLine is the plan as one line: the entry under way, else the next.
func planLine(entries []core.PlanEntry) string {
	done := 0
	var now string
	for _, e := range entries {
		switch {
		case e.Status == "completed":
			done++
		case e.Status == "in_progress", now == "":
			now = e.Content
		}
	}
	return fmt.Sprintf("%s (%d/%d done)", now, done, len(entries))
}

// ask asks about the tool calls waiting for a person, each once: which
// tool, and how to answer.
func (r *renderer) ask(ctx context.Context, t *output.Thread, st *sinkState, ids []string) error {
	p := r.p
	for _, id := range ids {
		name, ok := st.Calls[id]
		if !ok || st.Asked[id] {
			continue // a custom tool's call, or asked already
		}
		text := fmt.Sprintf("The agent wants to run `%s` and waits for approval.", name)
		if args := st.Args[id]; args != "" && args != "null" && args != "{}" {
			text += "\n\n```json\n" + strings.ReplaceAll(args, "```", "` ` `") + "\n```"
		}
		text += fmt.Sprintf("\n\nA Developer or above can reply `@%s allow` or `@%s deny`.", p.appUser(), p.appUser())
		if err := r.post(ctx, t, st, "ask:"+id, text); err != nil {
			return err
		}
		if st.Asked == nil {
			st.Asked = map[string]bool{}
		}
		st.Asked[id] = true
	}
	return p.setStatus(ctx, t, st, gl.Running, "Waiting for approval")
}

// post posts a note exactly once (output.PostOnce, the intent's key in a
// hidden marker in the body), in the discussion of the latest trigger.
func (r *renderer) post(ctx context.Context, t *output.Thread, st *sinkState, part, text string) error {
	p, g := r.p, *st.Reply
	key := t.Session.ID + ":" + part
	mark := ownMarker(key)
	return t.PostOnce(ctx, st, &st.Intent, output.Post{
		Key: key, Point: "post",
		Find: func(ctx context.Context, in output.Intent) (bool, error) { return p.marked(ctx, g, mark) },
		Do:   func(ctx context.Context) error { return p.reply(ctx, g, clip(text, 60000)+"\n\n"+mark) },
	})
}

// marked tells whether a note of the thread holds mark, newest first.
func (p *Provider) marked(ctx context.Context, g ref, mark string) (bool, error) {
	c, err := p.refClient(ctx, g)
	if err != nil {
		return false, err
	}
	desc, orderBy := "desc", "created_at"
	for page := int64(1); page <= 20; page++ {
		lo := gl.ListOptions{Page: page, PerPage: 100}
		var notes []*gl.Note
		var resp *gl.Response
		if g.Kind == kindMR {
			notes, resp, err = c.Notes.ListMergeRequestNotes(g.ProjectID, g.IID, &gl.ListMergeRequestNotesOptions{ListOptions: lo, Sort: &desc, OrderBy: &orderBy}, gl.WithContext(ctx))
		} else {
			notes, resp, err = c.Notes.ListIssueNotes(g.ProjectID, g.IID, &gl.ListIssueNotesOptions{ListOptions: lo, Sort: &desc, OrderBy: &orderBy}, gl.WithContext(ctx))
		}
		if err != nil {
			return false, err
		}
		for _, n := range notes {
			if strings.Contains(n.Body, mark) {
				return true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 || len(notes) == 0 {
			return false, nil
		}
	}
	return false, nil
}

// setStatus shows the turn as a commit status on a merge request's head
// (issues have none), its target the session's page: a Stop is a note
// "@app stop", or the page's button.
func (p *Provider) setStatus(ctx context.Context, t *output.Thread, st *sinkState, state gl.BuildStateValue, text string) error {
	g := st.Reply
	if g == nil || g.Kind != kindMR || g.HeadSHA == "" {
		return nil
	}
	text = clip(text, 250)
	if st.State == string(state) && (st.Description == text || state == gl.Running) {
		// GitLab refuses running → running ("Cannot transition status
		// via :run from :running") and keeps the description: while a
		// turn runs, the status shows what it said when the turn began.
		return nil
	}
	c, err := p.refClient(ctx, *g)
	if err != nil {
		return err
	}
	name, target := "switchboard", strings.TrimSuffix(p.cfg.PublicURL, "/")+"/sessions/"+t.Session.ID
	if state == gl.Running && st.State != string(gl.Running) {
		text += " · reply @" + p.appUser() + " stop to stop"
		text = clip(text, 250)
	}
	_, resp, err := c.Commits.SetCommitStatus(g.ProjectID, g.HeadSHA, &gl.SetCommitStatusOptions{State: state, Name: &name,
		TargetURL: &target, Description: &text}, gl.WithContext(ctx))
	// GitLab refuses a status that does not change the state ("Cannot
	// transition status"): the status shows the state already, with the
	// description it had.
	if err != nil && resp != nil && resp.StatusCode == http.StatusBadRequest && strings.Contains(err.Error(), "transition") {
		st.State = string(state)
		return nil
	}
	if err != nil {
		return err
	}
	st.State, st.Description = string(state), text
	return nil
}

// classify marks errors retrying cannot fix as permanent: the thread or
// project is gone, or the token may not write there.
func classify(err error) error {
	var e *gl.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		switch e.Response.StatusCode {
		case http.StatusNotFound, http.StatusForbidden, http.StatusUnprocessableEntity:
			return output.Permanent(err)
		}
	}
	return err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
