package main

import (
	"context"

	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// consolePlatforms are the platforms the gateway serves, each with
// whether its install flow is mounted (Set.Register mounts a flow for
// every provider with an Installer).
func consolePlatforms(gw *providers.Set) []console.Platform {
	var out []console.Platform
	for _, p := range gw.List() {
		i, ok := p.(providers.InstallFlow)
		out = append(out, console.Platform{Name: p.Name(), Install: ok && i.Installer() != nil})
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
