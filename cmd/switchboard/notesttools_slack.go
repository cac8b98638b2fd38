//go:build !switchboard_testtools

package main

import "github.com/switchboardhq/switchboard/providers/slack"

func slackHooks(func(string) string) *slack.Hooks { return nil }
