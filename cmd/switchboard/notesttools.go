//go:build !switchboard_testtools

package main

import (
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/runtime"
)

func testTools(func(string) string) []core.Tool { return nil }

func testStore(s runtime.Store, _ func(string) string) runtime.Store { return s }

func failpoint(func(string) string, string) func(string) { return nil }
