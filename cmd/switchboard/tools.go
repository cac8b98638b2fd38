package main

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/harness"
	"github.com/switchboardhq/switchboard/sessions/runtime"
)

// toolset is the tools every session is offered. Builds with the
// switchboard_testtools tag add the test tools of testtools.go.
func toolset(getenv func(string) string) runtime.Toolset {
	extra := testTools(getenv)
	return func(context.Context, *core.Session, *core.Agent) ([]core.Tool, error) {
		return append(harness.Conversation(), extra...), nil
	}
}
