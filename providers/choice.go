package providers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// RepositoryChooser is a platform whose sessions are about one of the
// repositories their agent is granted (core.RepositoryAccess) without
// naming it (a Linear issue): it picks the one, or asks the people.
type RepositoryChooser interface {
	Provider
	// ChooseRepository returns the one of repos (owner/name, on the git
	// host named host) the session is about, or "" when it is not clear
	// and the platform asked the people instead. The same session gets
	// the same answer.
	ChooseRepository(ctx context.Context, s *core.Session, host string, repos []string) (string, error)
}

// choice is the repository chosen for a session among those its agent
// is granted: Repo nil when the platform asked the people instead.
type choice struct {
	Repo    *core.Repository
	Granted []string
}

// chooseRepository is the repository a session from a RepositoryChooser
// works on; nil when its origin chooses none or its agent is granted
// none. A single granted repository is obvious: no one is asked.
func (s *Set) chooseRepository(ctx context.Context, sess *core.Session, a *core.Agent) (*choice, error) {
	if sess.Origin == nil {
		return nil, nil
	}
	c, ok := s.origin(sess.Origin.Provider).(RepositoryChooser)
	if !ok {
		return nil, nil
	}
	g, host, err := s.RepositoryGrant(ctx, sess, a)
	if errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrForbidden) {
		s.log.Warn("repository access not granted", "session_id", sess.ID, "err", err)
		return nil, nil
	}
	if err != nil || g == nil || len(g.Repositories) == 0 {
		return nil, err
	}
	hosts, _ := host.GrantedGit(*g)
	if len(hosts) == 0 {
		return nil, nil
	}
	hostname, _, err := net.SplitHostPort(hosts[0])
	if err != nil {
		hostname = hosts[0]
	}
	chosen := g.Repositories[0]
	if len(g.Repositories) > 1 {
		if chosen, err = c.ChooseRepository(ctx, sess, hostname, g.Repositories); err != nil {
			return nil, fmt.Errorf("choose the repository of session %s: %w", sess.ID, err)
		}
	}
	out := &choice{Granted: g.Repositories}
	for _, r := range g.Repositories {
		if strings.EqualFold(r, chosen) {
			_, name, _ := strings.Cut(r, "/")
			out.Repo = &core.Repository{FullName: r, CloneURL: cloneURL(hosts[0], r), Dir: name}
		}
	}
	return out, nil
}

// cloneURL is where git clones full from on hostport: HTTPS, but for
// port 80.
func cloneURL(hostport, full string) string {
	host, port, err := net.SplitHostPort(hostport)
	switch {
	case err != nil:
		return "https://" + hostport + "/" + full + ".git"
	case port == "443":
		return "https://" + host + "/" + full + ".git"
	case port == "80":
		return "http://" + host + "/" + full + ".git"
	}
	return "https://" + hostport + "/" + full + ".git"
}

// choiceNote tells the model which repository the session is about, or
// that the people were asked.
func choiceNote(c *choice) string {
	granted := strings.Join(c.Granted, ", ")
	if c.Repo == nil {
		return "Which of the repositories you may work on (" + granted + ") this session is about is not clear, so the people were asked to choose. " +
			"Change none of them before they answer: the answer comes as their next message."
	}
	return "This session is about the repository " + c.Repo.FullName + " (of those you may work on: " + granted + "). Work there."
}
