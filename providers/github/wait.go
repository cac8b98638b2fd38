package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// callRef is a tool call without a result yet, as a question shows it.
type callRef struct {
	Name   string `json:"name"`
	Input  string `json:"input,omitempty"` // clipped
	Custom bool   `json:"custom,omitempty"`
}

// question is the comment that asked about a call: its text, so the
// answer can be added under it.
type question struct {
	Comment int64  `json:"comment"`
	Text    string `json:"text"`
}

// maxOpenCalls bounds the calls the state keeps: a turn waits on few.
const maxOpenCalls = 64

// call records a tool call until its result.
func (st *sinkState) call(b core.ToolUseBody, custom bool) {
	if st.Calls == nil {
		st.Calls = map[string]callRef{}
	}
	if len(st.Calls) < maxOpenCalls {
		st.Calls[b.ToolUseID] = callRef{Name: b.Name, Input: clip(string(b.Input), 1000), Custom: custom}
	}
}

// shown is the call of ids a person is asked about: the first that is
// not a custom tool's (whose result the application gives), as the
// intake answers it (waitingCall); more counts the others a person will
// be asked about after it.
func (st *sinkState) shown(ids []string) (id string, c callRef, more int, ok bool) {
	for _, x := range ids {
		xc, known := st.Calls[x]
		if known && xc.Custom {
			continue
		}
		if !ok {
			id, c, ok = x, xc, true
			if !known {
				c = callRef{Name: "a tool"}
			}
			continue
		}
		more++
	}
	return id, c, more, ok
}

// wait shows that the session waits on tool calls. On a pull request the
// run stays in progress, titled "Waiting for approval", with Allow, Deny
// and Stop; everywhere a question is posted once per call, which a
// comment "@app allow" or "@app deny" answers (approval.go). Calls of
// custom tools wait for the application, with Stop only.
func (r *renderer) wait(ctx context.Context, t *output.Thread, st *sinkState, ids []string) error {
	p := r.p
	st.Waiting = true
	id, c, more, ok := st.shown(ids)
	if !ok {
		var names []string
		for _, x := range ids {
			names = append(names, "`"+st.Calls[x].Name+"`")
		}
		text := "The agent waits for the application to return the result of " + strings.Join(names, ", ") + "."
		if st.CheckRun != 0 {
			if err := p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{Status: gh.String("in_progress"),
				Output: st.output("Waiting for the application", text)}); err != nil {
				return err
			}
		}
		if st.StatusComment != 0 {
			return r.editStatus(ctx, st, "⏸ "+text)
		}
		return nil
	}
	asks := "The agent wants to run " + describeCall(c)
	if more > 0 {
		asks += fmt.Sprintf("\n\n%d more calls wait for approval after this one.", more)
	}
	who := "Only people with write access to this repository can answer."
	if st.CheckRun != 0 {
		summary := asks + "\n\n**Allow** or **Deny** it above, or comment `@" + p.cfg.Slug + " allow` or `@" + p.cfg.Slug + " deny`. " + who +
			"\n\n" + callMarker(id)
		if err := p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{Status: gh.String("in_progress"),
			Output: st.output("Waiting for approval", summary),
			Actions: []*gh.CheckRunAction{{Label: "Allow", Description: "Let the agent run this tool call", Identifier: allowAction},
				{Label: "Deny", Description: "Refuse this tool call", Identifier: denyAction}, stopButton}}); err != nil {
			return err
		}
	}
	if st.StatusComment != 0 {
		if err := r.editStatus(ctx, st, "⏸ Waiting for approval: `"+c.Name+"`."); err != nil {
			return err
		}
	}
	if _, asked := st.Asked[id]; asked {
		return nil
	}
	text := "⏸ **Allow this?** " + asks + "\n\nReply `@" + p.cfg.Slug + " allow` or `@" + p.cfg.Slug + " deny`. " + who
	return r.ask(ctx, t, st, id, text)
}

// describeCall names a call and shows its arguments.
func describeCall(c callRef) string {
	if c.Input == "" || c.Input == "{}" || c.Input == "null" {
		return "`" + c.Name + "`."
	}
	f := fence(c.Input)
	return "`" + c.Name + "` with:\n" + f + "json\n" + c.Input + "\n" + f
}

// fence is a code fence longer than any run of backticks in s.
func fence(s string) string {
	longest, run := 0, 0
	for _, ch := range s {
		if ch == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// ask posts the question about a call once (output.PostOnce, its key in
// a hidden marker) as an issue comment, where "@app allow" answers it.
func (r *renderer) ask(ctx context.Context, t *output.Thread, st *sinkState, id, text string) error {
	p, g := r.p, st.Reply
	key := t.Session.ID + ":ask:" + id
	marker := "<!-- switchboard:" + key + " -->"
	var made int64
	err := t.PostOnce(ctx, st, &st.Intent, output.Post{
		Key: key, Point: "post",
		Find: func(ctx context.Context, in output.Intent) (bool, error) {
			var err error
			made, err = p.marked(ctx, g, false, marker, markedSince(in))
			return made != 0, err
		},
		Do: func(ctx context.Context) error {
			c, _, err := p.client(g.Installation).Issues.CreateComment(ctx, g.Owner, g.Repo, g.Number,
				&gh.IssueComment{Body: gh.String(text + "\n\n" + marker)})
			made = c.GetID()
			return err
		},
	})
	if err != nil {
		return err
	}
	if st.Asked == nil {
		st.Asked = map[string]question{}
	}
	st.Asked[id] = question{Comment: made, Text: text}
	return nil
}

// settle adds the answer, and who gave it, under the question it
// answers.
func (r *renderer) settle(ctx context.Context, st *sinkState, e core.Event) (bool, error) {
	var b confirmationBody
	if e.Decode(&b) != nil {
		return false, nil
	}
	q, ok := st.Asked[b.ToolUseID]
	if !ok || q.Comment == 0 {
		return false, nil
	}
	verdict := "✅ Allowed"
	if b.Result != allowAction {
		verdict = "🚫 Denied"
	}
	if b.GitHub != nil && b.GitHub.Login != "" {
		verdict += " by @" + b.GitHub.Login
	}
	g := st.Reply
	_, _, err := r.p.client(g.Installation).Issues.EditComment(ctx, g.Owner, g.Repo, q.Comment, &gh.IssueComment{Body: gh.String(q.Text + "\n\n" + verdict + ".")})
	if err != nil {
		return true, err
	}
	delete(st.Asked, b.ToolUseID)
	return true, nil
}

// workingStatus is the status comment of a turn at work.
const workingStatus = "⏳ Working on it…"

// editStatus sets the status comment's text, with the plan under it.
func (r *renderer) editStatus(ctx context.Context, st *sinkState, text string) error {
	st.Status = text
	g := st.Reply
	body := text
	if plan := checklist(st.Plan); plan != "" {
		body += "\n\n" + plan
	}
	_, _, err := r.p.client(g.Installation).Issues.EditComment(ctx, g.Owner, g.Repo, st.StatusComment, &gh.IssueComment{Body: gh.String(body)})
	return err
}

// output is the run's output with title and summary, the plan under it;
// both are kept so a new plan can be shown under them.
func (st *sinkState) output(title, summary string) *gh.CheckRunOutput {
	st.Title, st.Summary = title, summary
	if plan := checklist(st.Plan); plan != "" {
		summary += "\n\n" + plan
	}
	return &gh.CheckRunOutput{Title: gh.String(title), Summary: gh.String(clip(summary, 60000))}
}

// showPlan shows the turn's latest plan under the run's output, or under
// the issue's status comment.
func (r *renderer) showPlan(ctx context.Context, st *sinkState) error {
	switch {
	case st.CheckRun != 0:
		title, summary := st.Title, st.Summary
		if title == "" {
			title, summary = "Working", "The agent is working on it."
		}
		return r.p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{Output: st.output(title, summary)})
	case st.StatusComment != 0:
		return r.editStatus(ctx, st, st.Status)
	}
	return nil
}

// maxPlanEntries bounds the checklist; a plan longer than that is cut.
const maxPlanEntries = 50

// checklist is a plan as a Markdown task list: completed entries ticked,
// the one in progress marked.
func checklist(entries []core.PlanEntry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Plan**\n")
	for i, e := range entries {
		if i == maxPlanEntries {
			b.WriteString("- … " + strconv.Itoa(len(entries)-i) + " more\n")
			break
		}
		box := "[ ]"
		if e.Status == "completed" {
			box = "[x]"
		}
		line := strings.Join(strings.Fields(clip(e.Content, 300)), " ")
		if e.Status == "in_progress" {
			line = "**" + line + "** (in progress)"
		}
		fmt.Fprintf(&b, "- %s %s\n", box, line)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
