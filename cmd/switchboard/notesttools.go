//go:build !switchboard_testtools

package main

import (
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/schedules"
)

func testTools(func(string) string) []core.Tool { return nil }

func turnFailpoint(func(string) string) func(string) { return nil }

func failpoint(func(string) string, string) func(string) { return nil }

func scheduleClock(func(string) string) schedules.Clock { return nil }
