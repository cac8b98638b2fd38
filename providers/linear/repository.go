package linear

import (
	"context"
	"strings"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/output"
)

var _ providers.RepositoryChooser = (*Provider)(nil)

// SuggestionThreshold is the confidence (0 to 1) Linear's repository
// suggestion needs for the agent to take it without asking.
const SuggestionThreshold = 0.6

// choices remembers what was chosen for a session in this process (the
// same session is asked about twice before its first turn: for the
// model, then for the checkout), so Linear is asked, and the people
// shown a question, once.
type choices struct {
	mu sync.Mutex
	m  map[string]string // session id → owner/name, "" when the people were asked
}

// ChooseRepository picks which of repos (the agent's granted
// repositories, on host) the issue of the session is about: Linear's
// issueRepositorySuggestions ranks them, and the most likely one is taken
// when its confidence reaches SuggestionThreshold. Otherwise the agent
// asks in the agent session, an elicitation whose options are the
// repositories, and returns "": the answer comes as the next prompt.
func (p *Provider) ChooseRepository(ctx context.Context, s *core.Session, host string, repos []string) (string, error) {
	p.choices.mu.Lock()
	chosen, ok := p.choices.m[s.ID]
	p.choices.mu.Unlock()
	if ok {
		return chosen, nil
	}
	if s.Origin == nil {
		return "", nil
	}
	rc, err := p.newRender(ctx, s, s.Origin.Key)
	if output.IsPermanent(err) {
		// Nobody to ask (no token): the model is told the choice is open.
		p.log.Warn("no repository suggestion for a session Linear cannot be asked about", "session_id", s.ID, "err", err)
		return "", nil
	}
	if err != nil {
		return "", err
	}
	chosen = rc.suggested(ctx, s, host, repos)
	if chosen == "" {
		if err := rc.askRepository(ctx, host, repos); err != nil {
			return "", err
		}
	}
	p.choices.mu.Lock()
	defer p.choices.mu.Unlock()
	if p.choices.m == nil || len(p.choices.m) > 10_000 {
		p.choices.m = map[string]string{}
	}
	p.choices.m[s.ID] = chosen
	return chosen, nil
}

// suggested is the granted repository Linear is confident enough the
// issue is about, or "" (none, or Linear could not say: the people are
// asked then).
func (rc *render) suggested(ctx context.Context, s *core.Session, host string, repos []string) string {
	issue := s.Metadata[metaIssueID]
	if issue == "" {
		return ""
	}
	candidates := make([]repoRef, len(repos))
	for i, r := range repos {
		candidates[i] = repoRef{Host: host, FullName: r}
	}
	if err := rc.p.budgets.wait(ctx, rc.org, prioAnswer); err != nil {
		return ""
	}
	sugg, err := rc.api.repositorySuggestions(ctx, issue, rc.agentSession, candidates)
	if err != nil {
		rc.p.log.Warn("linear repository suggestions failed; asking instead", "session_id", s.ID, "err", err)
		return ""
	}
	best, conf := "", 0.0
	for _, sg := range sugg {
		for _, r := range repos {
			if strings.EqualFold(r, sg.FullName) && sg.Confidence >= SuggestionThreshold && sg.Confidence > conf {
				best, conf = r, sg.Confidence
			}
		}
	}
	rc.p.log.Info("linear repository suggestion", "session_id", s.ID, "chosen", best, "confidence", conf, "suggestions", len(sugg))
	return best
}

// askRepository posts, once per session (its id is the session's), the
// elicitation that asks which repository the issue is about: its options
// are the repositories, by address on host (Linear shows GitHub's with
// their names and icons).
func (rc *render) askRepository(ctx context.Context, host string, repos []string) error {
	a := activity{ID: activityID(rc.session, "repository", 0), AgentSession: rc.agentSession,
		Content: map[string]any{"type": "elicitation", "body": "Which repository is this issue about? I may work on " + strings.Join(repos, ", ") +
			". Reply with its name or address."}}
	for _, r := range repos {
		a.Select = append(a.Select, option{Label: r, Value: "https://" + host + "/" + r})
	}
	return rc.send(ctx, a, prioAnswer)
}
