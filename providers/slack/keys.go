package slack

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
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
	in, err := core.FindInstallationWhere(ctx, p.cfg.Installations, Name, func(in *core.Installation) bool {
		w, err := url.Parse(in.Metadata["url"])
		return err == nil && strings.EqualFold(w.Host, host)
	})
	switch {
	case errors.Is(err, core.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	case in.Metadata["team_id"] != "":
		return in.Metadata["team_id"], nil
	}
	return in.ExternalID, nil
}

// keyInstallation is the installation of a thread s answers in: its
// origin's, or the workspace of one of its links.
func (p *Provider) keyInstallation(ctx context.Context, s *core.Session, key string) (*core.Installation, error) {
	if s.Origin != nil && s.Origin.Key == key {
		return p.sessionInstallation(ctx, s)
	}
	return p.InstallationOfKey(ctx, key)
}
