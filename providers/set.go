package providers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Options is every setting the modules declare, in module order.
func Options(modules []Module) []settings.Option {
	var out []settings.Option
	for _, m := range modules {
		out = append(out, m.Options...)
	}
	return out
}

// Load validates every module's settings and returns the builds of the
// platforms that are on.
func Load(modules []Module, v settings.Values, env LoadEnv) ([]Build, error) {
	var builds []Build
	for _, m := range modules {
		b, err := m.Load(v, env)
		if err != nil {
			return nil, err
		}
		if b != nil {
			builds = append(builds, b)
		}
	}
	return builds, nil
}

// Set is the gateway's providers, in the order they were listed, and the
// output sink of each that renders output. It wires each capability a
// provider has (see provider.go).
type Set struct {
	platforms Platforms
	list      []Provider
	sinks     []*output.Sink
	store     Store
	log       *slog.Logger
}

// NewSet builds the providers. failpoint gives a provider's output sink
// its crash-test failpoint (nil outside test builds).
func NewSet(builds []Build, d Deps, failpoint func(provider string) func(point string)) (*Set, error) {
	s := &Set{platforms: d.Platforms, store: d.Store, log: d.Logger}
	for _, build := range builds {
		p, err := build(d)
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, p)
		o, ok := p.(OutputSink)
		if !ok {
			continue
		}
		cfg := output.Config{Name: p.Name(), Store: d.Store, Renderer: o.Renderer(), Logger: d.Logger.With("component", "output"),
			Holder: d.Holder, ClaimTTL: d.ClaimTTL}
		if failpoint != nil {
			cfg.Failpoint = failpoint(p.Name())
		}
		s.sinks = append(s.sinks, output.New(cfg))
	}
	return s, nil
}

// List is the providers in order.
func (s *Set) List() []Provider { return s.list }

// Start starts the providers' own work, then the sinks, which resume the
// output a previous process left behind.
func (s *Set) Start(ctx context.Context) error {
	for _, p := range s.list {
		if st, ok := p.(Starter); ok {
			if err := st.Start(ctx); err != nil {
				return fmt.Errorf("start %s: %w", p.Name(), err)
			}
		}
	}
	for _, sink := range s.sinks {
		if err := sink.Start(ctx); err != nil {
			return fmt.Errorf("start %s output: %w", sink.Name(), err)
		}
	}
	return nil
}

// Stop stops the sinks (what they had not rendered resumes at the next
// start) and the providers.
func (s *Set) Stop(ctx context.Context) {
	for _, sink := range s.sinks {
		if err := sink.Stop(ctx); err != nil {
			s.log.Warn("stop output sink", "sink", sink.Name(), "err", err)
		}
	}
	for _, p := range s.list {
		if st, ok := p.(Starter); ok {
			if err := st.Stop(ctx); err != nil {
				s.log.Warn("stop provider", "provider", p.Name(), "err", err)
			}
		}
	}
}

// Register mounts the providers' webhooks and install flows on mux. A
// provider without what its install needs returns a nil Installer.
func (s *Set) Register(mux *http.ServeMux, publicURL string, states *oauth.States) {
	for _, p := range s.list {
		if w, ok := p.(WebhookIntake); ok {
			w.RegisterWebhooks(mux)
		}
		if i, ok := p.(InstallFlow); ok {
			if in := i.Installer(); in != nil {
				(&oauth.Flow{Provider: p.Name(), PublicURL: publicURL, States: states, Installer: in, Logger: s.log}).Register(mux)
			}
		}
	}
}

// Revokers are the providers that revoke an installation's tokens at the
// platform, by name.
func (s *Set) Revokers() map[string]Revoker {
	out := map[string]Revoker{}
	for _, p := range s.list {
		if r, ok := p.(Revoker); ok {
			out[p.Name()] = r
		}
	}
	return out
}

// ThreadOpeners are the providers that start a conversation for a
// scheduled session, by name.
func (s *Set) ThreadOpeners() map[string]core.ThreadOpener {
	out := map[string]core.ThreadOpener{}
	for _, p := range s.list {
		if o, ok := p.(core.ThreadOpener); ok {
			out[p.Name()] = o
		}
	}
	return out
}

// Repository is the repository the session works on, named by the
// provider it came from (a GitHub issue's or pull request's), or chosen
// by it among those the session's agent is granted (a Linear issue's:
// RepositoryChooser); nil when there is none.
func (s *Set) Repository(ctx context.Context, sess *core.Session) (*core.Repository, error) {
	if sess.Origin == nil {
		return nil, nil
	}
	p, ok := s.origin(sess.Origin.Provider).(RepositorySource)
	if !ok {
		c, err := s.chooseRepository(ctx, sess, nil)
		if err != nil || c == nil {
			return nil, err
		}
		return c.Repo, nil
	}
	return p.Repository(ctx, sess)
}

// origin is the provider a session came from, if the set has it.
func (s *Set) origin(name string) Provider {
	for _, p := range s.list {
		if p.Name() == name {
			return p
		}
	}
	return nil
}
