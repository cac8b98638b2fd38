//go:build switchboard_testtools

package main

import "github.com/switchboardhq/switchboard/providers/github"

// githubHooks parks the GitHub sink for good around the post of an answer
// when SWITCHBOARD_TEST_GITHUB_PARK is before_post (the intent is saved,
// nothing posted) or after_post (posted, the position not saved), or
// after_check_run (a check run created, the position not saved), so a
// crash test can SIGKILL the process in that window. Only test builds
// have it.
func githubHooks(getenv func(string) string) *github.Hooks {
	park := func() { select {} }
	switch getenv("SWITCHBOARD_TEST_GITHUB_PARK") {
	case "before_post":
		return &github.Hooks{BeforePost: park}
	case "after_post":
		return &github.Hooks{AfterPost: park}
	case "after_check_run":
		return &github.Hooks{AfterCheckRun: park}
	}
	return nil
}
