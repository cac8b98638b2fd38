package main

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// consolePlatforms are the platforms the gateway ships, as the console
// shows them: each with whether it is served and whether its install flow
// is mounted (Set.Register mounts a flow for every provider with an
// Installer).
func consolePlatforms(modules []providers.Module, v settings.Values, publicURL string, gw *providers.Set) []console.Platform {
	var out []console.Platform
	for _, m := range modules {
		p := m.Platform
		c := console.Platform{Name: p.Name, Label: p.Label, Thread: p.Thread, Setup: p.Setup, NoInstall: p.NoInstall,
			SetupFlow: p.SetupFlow, SetupFlowText: p.SetupFlowText, Docs: p.Docs, KeyURL: p.KeyURL, App: consoleApp(m, v, publicURL)}
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

// consoleApp is the module's app set-up as the console shows it: what
// "switchboard <platform> <command>" prints for serve's settings v, and
// the checklist of what they still lack; nil when the module has none.
func consoleApp(m providers.Module, v settings.Values, publicURL string) *console.AppSetup {
	if m.App == nil {
		return nil
	}
	setup := *m.App
	in := setup.NewAppInput(publicURL, v, nil)
	c := &console.AppSetup{Command: "switchboard " + m.Platform.Name + " " + setup.Command}
	for _, s := range setup.Switches {
		if in.Switches[s.Flag] {
			c.Command += " --" + s.Flag
		}
	}
	if publicURL != "" {
		c.Command += " --public-url " + publicURL
	}
	for _, check := range setup.Checklist(in) {
		c.Checklist = append(c.Checklist, console.Check{Text: check.Text, Fix: check.Fix, Done: check.Done})
	}
	app, err := setup.App(in)
	if err == nil {
		c.Manifest, err = app.Render(setup.Formats[0])
	}
	if err != nil {
		c.Problem = err.Error()
		return c
	}
	c.Steps = app.Steps
	return c
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
