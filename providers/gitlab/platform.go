package gitlab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// keyPattern is the grammar of origin keys: a project's full path (nested
// groups included) and an issue's iid after "#" or a merge request's
// after "!", as GitLab writes its references.
var keyPattern = regexp.MustCompile(`^gitlab:[A-Za-z0-9_.][A-Za-z0-9_.-]*(/[A-Za-z0-9_.][A-Za-z0-9_.-]*)+[#!][1-9][0-9]{0,9}$`)

// descriptor is what the rest of the gateway knows of GitLab.
func descriptor() providers.Platform {
	return providers.Platform{
		Name: Name, Label: "GitLab", Thread: "GitLab issue or merge request",
		Key:             keyPattern,
		KeyForm:         "gitlab:<group/project>#<issue> or gitlab:<group/project>!<merge request>",
		SettingPrefixes: []string{"SWITCHBOARD_GITLAB_"},
		Docs:            "docs/gitlab.md",
		Setup:           "GitLab is off. Set SWITCHBOARD_GITLAB_WEBHOOK_SECRET with SWITCHBOARD_GITLAB_TOKEN and SWITCHBOARD_GITLAB_PROJECT (one project), or with SWITCHBOARD_GITLAB_CLIENT_ID and SWITCHBOARD_GITLAB_CLIENT_SECRET (an OAuth application), and restart the gateway.",
		NoInstall:       "GitLab serves one project with a project access token (SWITCHBOARD_GITLAB_TOKEN); set SWITCHBOARD_GITLAB_CLIENT_ID and SWITCHBOARD_GITLAB_CLIENT_SECRET to install it through OAuth instead.",
		KeyURL:          func(key string) string { return keyURL(DefaultURL, key) },
		MetricsLabel:    topGroup,
		Health:          health,
	}
}

// Kinds of what a key names.
const (
	kindIssue = "#"
	kindMR    = "!"
)

// sessionKey is the origin key of an issue (kind "#") or merge request
// (kind "!") of a project.
func sessionKey(project, kind string, iid int64) string {
	return Name + ":" + project + kind + strconv.FormatInt(iid, 10)
}

// parseKey reads a key's project path, kind and iid.
func parseKey(key string) (project, kind string, iid int64, err error) {
	if !keyPattern.MatchString(key) {
		return "", "", 0, fmt.Errorf("key %q is not a GitLab key: %w", key, core.ErrInvalid)
	}
	rest := strings.TrimPrefix(key, Name+":")
	i := strings.LastIndexAny(rest, "#!")
	iid, err = strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil {
		return "", "", 0, fmt.Errorf("key %q: %w", key, core.ErrInvalid)
	}
	return rest[:i], rest[i : i+1], iid, nil
}

// keyURL is the web address of what a key names on the instance at base.
func keyURL(base, key string) string {
	project, kind, iid, err := parseKey(key)
	if err != nil {
		return ""
	}
	what := "issues"
	if kind == kindMR {
		what = "merge_requests"
	}
	return strings.TrimSuffix(base, "/") + "/" + project + "/-/" + what + "/" + strconv.FormatInt(iid, 10)
}

// tenantOf is the memory tenant of a project's sessions.
func tenantOf(project string) string { return Name + ":" + project }

// topGroup labels a tenant, gitlab:<group/…/project>, by its top-level
// group: of bounded cardinality where projects are not.
func topGroup(tenant string) string {
	path := strings.TrimPrefix(tenant, Name+":")
	group, _, _ := strings.Cut(path, "/")
	return Name + ":" + group
}

// health reads an installation's state from its metadata.
func health(in *core.Installation) (providers.InstallationHealth, bool) {
	if in.Metadata["mode"] == modeToken {
		return providers.InstallationHealth{OK: true, Text: "Project access token of " + in.Name}, true
	}
	return providers.InstallationHealth{}, false
}
