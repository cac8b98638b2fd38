package main

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/harness"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/sessions/runtime"
)

// toolset builds each session's tools: the conversation tools, the agent's
// custom tools under their policies, and, in builds with the
// switchboard_testtools tag, the test tools of testtools.go.
func toolsetFor(getenv func(string) string) runtime.Toolset {
	extra := testTools(getenv)
	return func(_ context.Context, _ *core.Session, a *core.Agent) (*toolset.Registry, error) {
		reg, err := toolset.New(append(harness.Conversation(), extra...)...)
		if err != nil {
			return nil, err
		}
		for _, spec := range a.Tools {
			policy, err := core.ParsePolicy(spec.Policy)
			if err != nil {
				return nil, fmt.Errorf("agent %s tool %q: %w", a.ID, spec.Name, err)
			}
			if err := reg.Add(toolset.CustomTool{Spec: spec}, policy); err != nil {
				return nil, fmt.Errorf("agent %s: %w", a.ID, err)
			}
		}
		return reg, nil
	}
}
