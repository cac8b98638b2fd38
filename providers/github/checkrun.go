package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/providers/output"
)

// createCheckRun shows a queued check run named after the app on the PR
// head, exactly once per rendered event (output.PostOnce): its external id
// is the intent's key (the session key, so the Stop button finds the
// session, and the seq of the event that creates it), so after a crash
// between the create and the recorded position the run made then is found
// on the head instead of made twice.
func (p *Provider) createCheckRun(ctx context.Context, t *output.Thread, st *sinkState, seq uint64) error {
	g := st.Reply
	c := p.client(g.Installation)
	sha := g.HeadSHA
	if sha == "" {
		pr, _, err := c.PullRequests.Get(ctx, g.Owner, g.Repo, g.Number)
		if err != nil {
			return err
		}
		sha = pr.GetHead().GetSHA()
	}
	ext := checkRunExternalID(t.Session.Origin.Key, seq)
	return t.PostOnce(ctx, st, &st.Intent, output.Post{
		Key: ext, Point: "check_run",
		Find: func(ctx context.Context, _ output.Intent) (bool, error) {
			id, err := p.findCheckRun(ctx, g, sha, ext)
			st.CheckRun = id
			return id != 0, err
		},
		Do: func(ctx context.Context) error {
			run, _, err := c.Checks.CreateCheckRun(ctx, g.Owner, g.Repo, gh.CreateCheckRunOptions{
				Name: p.cfg.Slug, HeadSHA: sha, Status: gh.String("queued"), ExternalID: gh.String(ext),
				Output:  &gh.CheckRunOutput{Title: gh.String("Queued"), Summary: gh.String("The agent will start shortly.")},
				Actions: []*gh.CheckRunAction{stopButton},
			})
			st.CheckRun = run.GetID()
			return err
		},
	})
}

// findCheckRun looks for the app's check run with an external id on a
// commit (every run, not only the latest per name).
func (p *Provider) findCheckRun(ctx context.Context, g *ref, sha, ext string) (int64, error) {
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(p.cfg.Slug), Filter: gh.String("all"), AppID: gh.Int64(p.cfg.AppID),
		ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		res, resp, err := p.client(g.Installation).Checks.ListCheckRunsForRef(ctx, g.Owner, g.Repo, sha, opts)
		if err != nil {
			return 0, err
		}
		for _, run := range res.CheckRuns {
			if run.GetExternalID() == ext {
				return run.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

// checkRunExternalID is a check run's intent key: the session key, then
// the seq of the event that made it (owner and repository names never
// hold an @).
func checkRunExternalID(key string, seq uint64) string {
	return key + "@" + strconv.FormatUint(seq, 10)
}

// checkRunSession is the session key in a check run's external id (runs
// made before intents carry the bare key).
func checkRunSession(ext string) string {
	if i := strings.LastIndex(ext, "@"); i >= 0 {
		return ext[:i]
	}
	return ext
}

// stopButton is the run's Stop while a turn is open.
var stopButton = &gh.CheckRunAction{Label: "Stop", Description: "Stop the agent", Identifier: stopAction}

// updateCheckRun updates the turn's run; a run not completed offers Stop
// unless opts names its actions.
func (p *Provider) updateCheckRun(ctx context.Context, st *sinkState, opts gh.UpdateCheckRunOptions) error {
	opts.Name = p.cfg.Slug
	if opts.Actions == nil && (opts.Status == nil || *opts.Status != "completed") {
		opts.Actions = []*gh.CheckRunAction{stopButton}
	}
	c := p.client(st.Reply.Installation)
	req, err := c.NewRequest("PATCH", fmt.Sprintf("repos/%v/%v/check-runs/%v", st.Reply.Owner, st.Reply.Repo, st.CheckRun),
		checkRunUpdate{UpdateCheckRunOptions: opts, Actions: nonNilActions(opts.Actions)})
	if err != nil {
		return err
	}
	_, err = c.Do(ctx, req, nil)
	return err
}

// checkRunUpdate is an update that always sends its actions: GitHub
// keeps a run's actions when an update names none, so a finished run
// would keep its Stop button unless an empty list replaces it.
type checkRunUpdate struct {
	gh.UpdateCheckRunOptions
	Actions []*gh.CheckRunAction `json:"actions"`
}

func nonNilActions(a []*gh.CheckRunAction) []*gh.CheckRunAction {
	if a == nil {
		return []*gh.CheckRunAction{}
	}
	return a
}
