package slack

import (
	"context"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// InstallationOfKey is the installation of the workspace a thread's key
// names.
func (p *Provider) InstallationOfKey(ctx context.Context, key string) (*core.Installation, error) {
	team, _, _, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	return p.cfg.Installations.FindInstallation(ctx, Name, team)
}

// KeyOfURL is the key of the thread a Slack message link names
// (https://<workspace>.slack.com/archives/<channel>/p<ts>, with
// thread_ts when the message is a reply): the workspace is the
// installation whose address the host is. ok is false for another host.
func (p *Provider) KeyOfURL(ctx context.Context, u *url.URL) (string, bool, error) {
	if !strings.HasSuffix(strings.ToLower(u.Host), ".slack.com") {
		return "", false, nil
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 3 || parts[0] != "archives" || !strings.HasPrefix(parts[2], "p") || len(parts[2]) < 8 {
		return "", false, nil
	}
	digits := parts[2][1:]
	ts := digits[:len(digits)-6] + "." + digits[len(digits)-6:]
	if thread := u.Query().Get("thread_ts"); thread != "" {
		ts = thread
	}
	team, err := p.teamOfHost(ctx, u.Host)
	if err != nil || team == "" {
		return "", false, err
	}
	return sessionKey(team, parts[1], ts), true, nil
}

// teamOfHost is the team of the installation whose workspace address has
// host; "" for none.
func (p *Provider) teamOfHost(ctx context.Context, host string) (string, error) {
	after := ""
	for {
		page, more, err := p.cfg.Installations.ListInstallations(ctx, core.InstallationQuery{Provider: Name, After: after, Limit: 1000})
		if err != nil {
			return "", err
		}
		for _, in := range page {
			if w, err := url.Parse(in.Metadata["url"]); err == nil && strings.EqualFold(w.Host, host) {
				if team := in.Metadata["team_id"]; team != "" {
					return team, nil
				}
				return in.ExternalID, nil
			}
		}
		if !more || len(page) == 0 {
			return "", nil
		}
		after = page[len(page)-1].ID
	}
}

// answerKey is the thread an event of t answers in: the thread its turn
// came from (output.Thread.Key), else the session's origin.
func answerKey(t *output.Thread) string {
	if t.Key != "" {
		return t.Key
	}
	if t.Session.Origin != nil {
		return t.Session.Origin.Key
	}
	return ""
}

// keyInstallation is the installation of a thread s answers in: its
// origin's, or the workspace of one of its links.
func (p *Provider) keyInstallation(ctx context.Context, s *core.Session, key string) (*core.Installation, error) {
	if s.Origin != nil && s.Origin.Key == key {
		return p.sessionInstallation(ctx, s)
	}
	return p.InstallationOfKey(ctx, key)
}
