package github

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// descriptor is what the rest of the gateway knows of GitHub. Only the
// App's own variables are its settings: CI runners set many GITHUB_* of
// their own.
func descriptor() providers.Platform {
	return providers.Platform{
		Name: Name, Label: "GitHub", Thread: "GitHub issue or pull request",
		Key:             regexp.MustCompile(`^github:[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}#[1-9][0-9]{0,9}$`),
		KeyForm:         "github:<owner>/<repo>#<number>",
		SettingPrefixes: []string{"GITHUB_APP_", "GITHUB_WEBHOOK_"},
		Docs:            "docs/github.md",
		Setup:           "GitHub is off. Set GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY_FILE, GITHUB_WEBHOOK_SECRET and GITHUB_APP_SLUG and restart the gateway.",
		NoInstall:       "The gateway has no GitHub App yet. Create one from its manifest (the flow asks for the admin token), or set GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY_FILE, GITHUB_WEBHOOK_SECRET and GITHUB_APP_SLUG; then restart the gateway.",
		SetupFlow:       "oauth/github/manifest",
		SetupFlowText:   "Create the GitHub App",
		KeyURL:          issueURL,
		MetricsLabel:    ownerOf,
		Health:          health,
	}
}

// issueURL is the address of the issue or pull request an origin key
// names, github:<owner>/<repo>#<n> (GitHub sends an issue's address on to
// its pull request).
func issueURL(key string) string {
	rest, ok := strings.CutPrefix(key, Name+":")
	repo, num, found := strings.Cut(rest, "#")
	if !ok || !found || strings.Count(repo, "/") != 1 || num == "" || strings.Trim(num, "0123456789") != "" {
		return ""
	}
	owner, name, _ := strings.Cut(repo, "/")
	return "https://github.com/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/issues/" + num
}

// ownerOf labels a tenant, github:<owner>/<repo>, by its owner: an App is
// installed on an account, not per repository.
func ownerOf(tenant string) string {
	if owner, _, ok := strings.Cut(tenant, "/"); ok {
		return owner
	}
	return tenant
}

// health reads an installation's state from its metadata: an App's
// tokens are made from its key and never stored.
func health(in *core.Installation) (providers.InstallationHealth, bool) {
	switch in.Metadata["status"] {
	case "suspended":
		return providers.InstallationHealth{Text: "Suspended on GitHub: its events are ignored until it is unsuspended."}, true
	case "deleted":
		return providers.InstallationHealth{Text: "Uninstalled on GitHub: install it again to serve it."}, true
	}
	return providers.InstallationHealth{OK: true, Text: "Active"}, true
}
