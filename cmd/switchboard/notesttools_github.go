//go:build !switchboard_testtools

package main

import "github.com/switchboardhq/switchboard/providers/github"

func githubHooks(func(string) string) *github.Hooks { return nil }
