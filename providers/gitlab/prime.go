package gitlab

import (
	"context"
	"fmt"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

var _ providers.ContextPrimer = (*Provider)(nil)

// historyLimit is how many earlier notes the first turn sees, newest
// kept.
const historyLimit = 20

// Prime gives a new session the issue or merge request it was called on
// (title and description), from the input that started it, and the notes
// written there before the mention: user.messages (level internal, actor
// system) logged before the first turn.
func (p *Provider) Prime(ctx context.Context, s *core.Session) ([]core.Event, error) {
	if s.Origin == nil || s.Origin.Provider != Name || s.LastSeq != 0 {
		return nil, nil
	}
	pending, err := p.cfg.Sessions.Pending(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	for _, e := range pending {
		var b inputBody
		if e.Type != core.TypeUserMessage || e.Decode(&b) != nil || b.GitLab == nil || b.Context == nil {
			continue
		}
		what := "issue"
		if b.GitLab.Kind == kindMR {
			what = "merge request"
		}
		text := fmt.Sprintf("GitLab %s %s%s%d in project %s: %s", what, b.GitLab.Project, b.GitLab.Kind, b.GitLab.IID,
			b.GitLab.Project, b.Context.Title)
		if d := strings.TrimSpace(b.Context.Description); d != "" {
			text += "\n\n" + clip(d, 20000)
		}
		evs := []core.Event{core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: text})}
		earlier, err := p.earlier(ctx, *b.GitLab)
		if err != nil {
			// The conversation before the mention is context, not the
			// request: the session goes on without it.
			p.log.Warn("read the notes before the mention", "key", s.Origin.Key, "err", err)
		} else if earlier != "" {
			evs = append(evs, core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: earlier}))
		}
		return evs, nil
	}
	return nil, nil
}

// earlier is the conversation before the triggering note, oldest first,
// or "".
func (p *Provider) earlier(ctx context.Context, g ref) (string, error) {
	c, err := p.refClient(ctx, g)
	if err != nil {
		return "", err
	}
	asc, orderBy := "asc", "created_at"
	lo := gl.ListOptions{PerPage: 100}
	var notes []*gl.Note
	if g.Kind == kindMR {
		notes, _, err = c.Notes.ListMergeRequestNotes(g.ProjectID, g.IID, &gl.ListMergeRequestNotesOptions{ListOptions: lo, Sort: &asc, OrderBy: &orderBy}, gl.WithContext(ctx))
	} else {
		notes, _, err = c.Notes.ListIssueNotes(g.ProjectID, g.IID, &gl.ListIssueNotesOptions{ListOptions: lo, Sort: &asc, OrderBy: &orderBy}, gl.WithContext(ctx))
	}
	if err != nil {
		return "", err
	}
	var lines []string
	for _, n := range notes {
		if n.System || (g.NoteID != 0 && n.ID >= g.NoteID) {
			continue
		}
		who := "@" + n.Author.Username
		if strings.EqualFold(n.Author.Username, p.appUser()) || marker.MatchString(n.Body) {
			who = "you"
		}
		lines = append(lines, who+": "+strings.TrimSpace(marker.ReplaceAllString(n.Body, "")))
	}
	if len(lines) == 0 {
		return "", nil
	}
	lines = lines[max(0, len(lines)-historyLimit):]
	return "Earlier notes on this thread:\n" + strings.Join(lines, "\n"), nil
}
