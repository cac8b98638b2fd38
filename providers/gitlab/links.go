package gitlab

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/providers"
)

var _ providers.URLKeyer = (*Provider)(nil)

// KeyOfURL is the key of the issue or merge request an address of the
// instance names: <url>/<group/…/project>/-/issues/<iid> or
// …/-/merge_requests/<iid>, anything after the iid ignored (a diff's tab,
// a note's anchor); ok is false for another host or shape.
func (p *Provider) KeyOfURL(_ context.Context, u *url.URL) (string, bool, error) {
	web, err := url.Parse(p.cfg.URL)
	if err != nil || !strings.EqualFold(u.Host, web.Host) {
		return "", false, nil
	}
	key, ok := keyOfPath(strings.TrimPrefix(u.Path, strings.TrimSuffix(web.Path, "/")))
	return key, ok, nil
}

// keyOfPath reads a project's issue or merge request path.
func keyOfPath(path string) (string, bool) {
	project, rest, ok := strings.Cut(strings.Trim(path, "/"), "/-/")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		return "", false
	}
	kind := map[string]string{"issues": kindIssue, "merge_requests": kindMR}[parts[0]]
	iid, err := strconv.ParseInt(parts[1], 10, 64)
	if kind == "" || err != nil || iid <= 0 {
		return "", false
	}
	key := sessionKey(project, kind, iid)
	if !keyPattern.MatchString(key) {
		return "", false
	}
	return key, true
}
