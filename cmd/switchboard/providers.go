package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/installations"
	"github.com/switchboardhq/switchboard/providers/output"
	"github.com/switchboardhq/switchboard/sessions"
)

// gateway is the explicit list of platform providers the configuration
// enables, and the output sinks that render their sessions.
type gateway struct {
	list  []providers.Provider
	sinks []*output.Sink
	db    *sessions.Store // installations, once keys, sink positions
	log   *slog.Logger
}

// buildProviders makes the providers whose settings are given, and a sink
// for each that renders output.
func buildProviders(cfg *serveConfig, db *sessions.Store, router *providers.Router, getenv func(string) string, log *slog.Logger) (*gateway, error) {
	g := &gateway{db: db, log: log}
	if cfg.slack.enabled {
		p, err := newSlack(cfg.slack, db, db, cfg, router, log.With("component", "slack"))
		if err != nil {
			return nil, err
		}
		g.list = append(g.list, p)
	}
	if cfg.github.enabled {
		p, err := newGitHub(cfg.github, db, db, cfg, router, log.With("component", "github"))
		if err != nil {
			return nil, err
		}
		g.list = append(g.list, p)
	}
	if cfg.linear.enabled {
		p, err := newLinear(cfg.linear, db, db, cfg, router, log.With("component", "linear"))
		if err != nil {
			return nil, err
		}
		g.list = append(g.list, p)
	}
	for _, p := range g.list {
		o, ok := p.(providers.OutputSink)
		if !ok {
			continue
		}
		g.sinks = append(g.sinks, output.New(output.Config{Name: p.Name(), Store: db, Renderer: o.Renderer(),
			Failpoint: failpoint(getenv, p.Name()), Logger: log.With("component", "output")}))
	}
	return g, nil
}

// start starts the providers' own work, then the sinks, which resume the
// output a previous process left behind.
func (g *gateway) start(ctx context.Context) error {
	for _, p := range g.list {
		if s, ok := p.(providers.Starter); ok {
			if err := s.Start(ctx); err != nil {
				return err
			}
		}
	}
	for _, s := range g.sinks {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// stop stops the sinks (what they had not rendered resumes at the next
// start) and the providers.
func (g *gateway) stop(ctx context.Context) {
	for _, s := range g.sinks {
		if err := s.Stop(ctx); err != nil {
			g.log.Warn("stop output sink", "sink", s.Name(), "err", err)
		}
	}
	for _, p := range g.list {
		if s, ok := p.(providers.Starter); ok {
			if err := s.Stop(ctx); err != nil {
				g.log.Warn("stop provider", "provider", p.Name(), "err", err)
			}
		}
	}
}

// register mounts the providers' webhooks and install flows on mux and
// /v1/installations on v1.
func (g *gateway) register(mux, v1 *http.ServeMux, cfg *serveConfig, agents installations.Agents) error {
	db := g.db
	revokers := map[string]providers.Revoker{}
	var states *oauth.States
	for _, p := range g.list {
		if w, ok := p.(providers.WebhookIntake); ok {
			w.RegisterWebhooks(mux)
		}
		if r, ok := p.(providers.Revoker); ok {
			revokers[p.Name()] = r
		}
		i, ok := p.(providers.InstallFlow)
		if !ok || !installable(cfg, p.Name()) {
			continue
		}
		if states == nil {
			var err error
			if states, err = oauth.NewStates(cfg.masterKey, db); err != nil {
				return err
			}
		}
		(&oauth.Flow{Provider: p.Name(), PublicURL: cfg.publicURL, States: states, Installer: i.Installer(), Logger: g.log}).Register(mux)
	}
	(&installations.Handler{Store: db, Agents: agents, Revokers: revokers, Logger: g.log, MaxBody: cfg.maxBody}).Register(v1)
	return nil
}

// installable reports whether a provider has what its OAuth install needs.
func installable(cfg *serveConfig, name string) bool {
	if name == "slack" {
		return cfg.slack.cfg.ClientID != ""
	}
	return true
}

func (g *gateway) toolServers() []providers.ToolServer {
	var out []providers.ToolServer
	for _, p := range g.list {
		if t, ok := p.(providers.ToolServer); ok {
			out = append(out, t)
		}
	}
	return out
}

func (g *gateway) primers() []providers.ContextPrimer {
	var out []providers.ContextPrimer
	for _, p := range g.list {
		if t, ok := p.(providers.ContextPrimer); ok {
			out = append(out, t)
		}
	}
	return out
}
