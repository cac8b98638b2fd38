package github

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// Metadata of a GitHub installation record (what /v1/installations
// shows). An installation's tokens are made from the App key and never
// stored, so its status lives here rather than in HasToken.
const (
	metaSlug        = "slug"
	metaStatus      = "status" // statusActive, statusSuspended, statusDeleted
	metaAccountType = "account_type"
	metaSelection   = "repository_selection"
	metaRepos       = "repositories" // full names, sorted, comma-separated
)

// Installation statuses. A deleted installation keeps its record (its
// agent binding and policy come back if it is installed again), but its
// events are ignored until then; a suspended one's are ignored until it is
// unsuspended.
const (
	statusActive    = "active"
	statusSuspended = "suspended"
	statusDeleted   = "deleted"
)

// installChange is what an installation or installation_repositories
// event, or the install callback, says of an installation.
type installChange struct {
	action      string // the event's action; "setup" for the callback
	account     string
	accountType string
	selection   string
	suspended   bool // the callback: GitHub says it is suspended
	repos       []string
	setRepos    bool // repos is the full list (installation created)
	added       []string
	removed     []string
}

// installChangeOf reads an installation or installation_repositories
// event; nil for any other.
func installChangeOf(ev any) *installChange {
	switch e := ev.(type) {
	case *gh.InstallationEvent:
		in := e.GetInstallation()
		ch := &installChange{action: e.GetAction(), account: in.GetAccount().GetLogin(), accountType: in.GetAccount().GetType(),
			selection: in.GetRepositorySelection()}
		if e.GetAction() == "created" {
			ch.repos, ch.setRepos = repoNames(e.Repositories), true
		}
		return ch
	case *gh.InstallationRepositoriesEvent:
		in := e.GetInstallation()
		return &installChange{action: e.GetAction(), account: in.GetAccount().GetLogin(), accountType: in.GetAccount().GetType(),
			selection: e.GetRepositorySelection(), added: repoNames(e.RepositoriesAdded), removed: repoNames(e.RepositoriesRemoved)}
	}
	return nil
}

func repoNames(repos []*gh.Repository) []string {
	out := make([]string, 0, len(repos))
	for _, r := range repos {
		if n := r.GetFullName(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// apply changes a record as the change says. It is pure, so the store can
// run it inside its update transaction.
func (ch installChange) apply(rec *core.Installation, slug string) {
	if rec.Metadata == nil {
		rec.Metadata = map[string]string{}
	}
	m := rec.Metadata
	m[metaSlug] = slug
	if ch.account != "" {
		rec.Name = ch.account
	}
	if ch.accountType != "" {
		m[metaAccountType] = ch.accountType
	}
	if ch.selection != "" {
		m[metaSelection] = ch.selection
	}
	status := m[metaStatus]
	if status == "" {
		status = statusActive
	}
	switch ch.action {
	case "created":
		status = statusActive
	case "setup":
		status = statusActive
		if ch.suspended {
			status = statusSuspended
		}
	case "deleted":
		status = statusDeleted
		ch.repos, ch.setRepos = nil, true
	case "suspend":
		if status != statusDeleted {
			status = statusSuspended
		}
	case "unsuspend":
		if status != statusDeleted {
			status = statusActive
		}
	}
	m[metaStatus] = status
	repos := ch.repos
	if !ch.setRepos {
		repos = splitRepos(m[metaRepos])
	}
	for _, r := range ch.added {
		if !slices.Contains(repos, r) {
			repos = append(repos, r)
		}
	}
	repos = slices.DeleteFunc(repos, func(r string) bool { return slices.Contains(ch.removed, r) })
	slices.Sort(repos)
	if len(repos) == 0 {
		delete(m, metaRepos)
	} else {
		m[metaRepos] = strings.Join(repos, ",")
	}
}

func splitRepos(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// installStatus is a record's status; records made before statuses were
// kept are active.
func installStatus(in *core.Installation) string {
	if s := in.Metadata[metaStatus]; s != "" {
		return s
	}
	return statusActive
}

// trackInstallation records a change to an installation: the record made
// if it is new, else changed in one store transaction. Changes are
// serialised in the process, so two deliveries about one installation
// (repositories added, then removed) cannot lose one another.
func (p *Provider) trackInstallation(ctx context.Context, id int64, ch installChange, log *slog.Logger) (*core.Installation, error) {
	p.instMu.Lock()
	defer p.instMu.Unlock()
	ext := strconv.FormatInt(id, 10)
	in, err := p.cfg.Installations.FindInstallation(ctx, Name, ext)
	switch {
	case errors.Is(err, core.ErrNotFound):
		rec := &core.Installation{Provider: Name, ExternalID: ext}
		ch.apply(rec, p.cfg.Slug)
		in, err = p.cfg.Installations.SaveInstallation(ctx, rec, nil, nil)
	case err == nil:
		before := installStatus(in)
		in, err = p.cfg.Installations.UpdateInstallation(ctx, in.ID, func(rec *core.Installation) error {
			ch.apply(rec, p.cfg.Slug)
			return nil
		})
		if err == nil && before != installStatus(in) {
			log.Info("github installation status changed", "installation_id", in.ID, "external_id", ext, "from", before, "to", installStatus(in))
		}
	}
	if err != nil {
		return nil, err
	}
	if st := installStatus(in); st == statusDeleted || st == statusSuspended {
		p.forget(id)
	}
	return in, nil
}

// forget drops what the process holds for an installation that was
// uninstalled or suspended: its client (and with it the installation
// token), its repository tokens for git, its sessions' MCP servers, and
// the permission answers, which were given to it. They are made again if
// it comes back.
func (p *Provider) forget(id int64) {
	p.mu.Lock()
	delete(p.clients, id)
	p.perms = map[string]permEntry{}
	p.mu.Unlock()
	p.forgetGit(id)
	p.forgetTools(id)
}

// recordInstallation records an installation the first time an event
// names it (an app installed while the gateway was down is accepted), and
// reports whether its events are to be handled: not once it was deleted
// (until it is installed again) nor while it is suspended.
func (p *Provider) recordInstallation(ctx context.Context, id int64, account string) (*core.Installation, bool, error) {
	in, err := p.cfg.Installations.FindInstallation(ctx, Name, strconv.FormatInt(id, 10))
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		return nil, false, err
	}
	if err == nil && (account == "" || in.Name == account) {
		return in, installStatus(in) == statusActive, nil
	}
	in, err = p.trackInstallation(ctx, id, installChange{account: account}, p.log)
	if err != nil {
		return nil, false, err
	}
	return in, installStatus(in) == statusActive, nil
}

// policyAllows is the installation's access policy on GitHub: channels
// are repositories (owner/repo), users are logins, both matched without
// regard to case as GitHub does.
func policyAllows(pol core.AccessPolicy, owner, repo, login string) bool {
	in := func(list []string, v string) bool {
		return len(list) == 0 || slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, v) })
	}
	return in(pol.Channels, owner+"/"+repo) && in(pol.Users, login)
}
