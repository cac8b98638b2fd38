//go:build switchboard_testtools

package main

import "github.com/switchboardhq/switchboard/providers/slack"

// slackHooks parks the Slack sink for good around the post of a reply
// when SWITCHBOARD_TEST_SLACK_PARK is before_post (the intent is saved,
// nothing posted) or after_post (posted, the position not saved), so a
// crash test can SIGKILL the process in that window. Only test builds
// have it.
func slackHooks(getenv func(string) string) *slack.Hooks {
	park := func() { select {} }
	switch getenv("SWITCHBOARD_TEST_SLACK_PARK") {
	case "before_post":
		return &slack.Hooks{BeforePost: park}
	case "after_post":
		return &slack.Hooks{AfterPost: park}
	}
	return nil
}
