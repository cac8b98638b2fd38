package main

import (
	"io"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/surfaces/cli"
)

// appCommands are the app set-up commands, "switchboard <platform>
// <command>", of the modules that declare one.
func appCommands(modules []providers.Module) []command.Command {
	var setups []cli.AppSetup
	for _, m := range modules {
		if m.App == nil {
			continue
		}
		setup, opts := *m.App, m.Options
		c := cli.AppSetup{Platform: m.Platform.Name, Label: m.Platform.Label, Name: setup.Command, Summary: setup.Summary, Formats: setup.Formats}
		for _, s := range setup.Switches {
			c.Switches = append(c.Switches, cli.AppSwitch{Flag: s.Flag, Usage: s.Usage})
		}
		c.Render = func(req cli.AppRequest) (cli.AppOutput, error) {
			// The defaults of the switches are what serve would read in
			// this environment.
			v, err := settings.Parse(m.Platform.Name, opts, nil, req.Getenv, io.Discard)
			if err != nil {
				return cli.AppOutput{}, err
			}
			app, err := setup.App(setup.NewAppInput(req.PublicURL, v, req.Set))
			if err != nil {
				return cli.AppOutput{}, err
			}
			text, err := app.Render(req.Format)
			return cli.AppOutput{Manifest: text, Steps: app.Steps}, err
		}
		setups = append(setups, c)
	}
	return cli.Apps(setups)
}
