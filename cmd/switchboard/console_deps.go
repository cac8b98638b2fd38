package main

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// consolePlatforms are the platforms the gateway ships, as the console
// shows them: each with whether it is served and whether its install flow
// is mounted (Set.Register mounts a flow for every provider with an
// Installer).
func consolePlatforms(platforms providers.Platforms, gw *providers.Set) []console.Platform {
	var out []console.Platform
	for _, p := range platforms {
		c := console.Platform{Name: p.Name, Label: p.Label, Thread: p.Thread, Setup: p.Setup, NoInstall: p.NoInstall,
			SetupFlow: p.SetupFlow, SetupFlowText: p.SetupFlowText, Docs: p.Docs, KeyURL: p.KeyURL}
		if p.Health != nil {
			health := p.Health
			c.Health = func(in *core.Installation) (string, bool, bool) {
				h, ok := health(in)
				return h.Text, h.OK, ok
			}
		}
		for _, served := range gw.List() {
			if served.Name() == p.Name {
				i, ok := served.(providers.InstallFlow)
				c.Served, c.Install = true, ok && i.Installer() != nil
			}
		}
		out = append(out, c)
	}
	return out
}

// consoleContainers gives the console the sandbox backend's containers;
// nil without a sandbox backend.
func consoleContainers(sb *sandbox.Docker) console.Containers {
	if sb == nil {
		return nil
	}
	return sandboxContainers{sb}
}

// consoleSandboxOff is why sandboxes are off, as the overview names it;
// nil when they are on.
func consoleSandboxOff(off *sandbox.Off) *console.SandboxOff {
	if off == nil {
		return nil
	}
	return &console.SandboxOff{Cause: off.Cause, Fix: off.Fix}
}

type sandboxContainers struct{ d *sandbox.Docker }

func (s sandboxContainers) Containers(ctx context.Context) ([]console.Container, error) {
	list, err := s.d.Containers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]console.Container, 0, len(list))
	for _, c := range list {
		out = append(out, console.Container{SessionID: c.SessionID, Name: c.Name, ID: c.ID, State: c.State, Status: c.Status, Created: c.Created})
	}
	return out, nil
}
