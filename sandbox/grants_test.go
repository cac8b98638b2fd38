package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// fakeGranter grants the sessions of one platform its git host, with
// credential ids that start with the platform's name.
type fakeGranter struct{ platform, host string }

func (g fakeGranter) GitGrant(_ context.Context, s *core.Session) ([]string, string, bool) {
	if s.Origin == nil || s.Origin.Provider != g.platform {
		return nil, "", false
	}
	return []string{g.host}, g.platform + "-git:" + s.ID, true
}

func (g fakeGranter) IsGitCredential(id string) bool {
	return strings.HasPrefix(id, g.platform+"-git:")
}

func (g fakeGranter) GitHeader(ctx context.Context, id, hostport string) (string, string, error) {
	return "Authorization", g.platform + " " + id + " for " + hostport, nil
}

// fakeVault resolves every id and notes what it was asked.
type fakeVault struct{ calls []string }

func (v *fakeVault) Header(ctx context.Context, id, host string) (string, string, error) {
	v.calls = append(v.calls, "header "+id)
	return "X-Vault", id + " for " + host, nil
}

func (v *fakeVault) Token(ctx context.Context, id string) (string, error) {
	v.calls = append(v.calls, "token "+id)
	return "vault " + id, nil
}

func (v *fakeVault) Refresh(ctx context.Context, id string) error {
	v.calls = append(v.calls, "refresh "+id)
	return nil
}

// fakeSessions holds sessions by id; reads counts the lookups. Agents
// are built-in ones unless agents has them; credentials are the vault's.
type fakeSessions struct {
	m           map[string]*core.Session
	agents      map[string]*core.Agent
	credentials map[string]*core.Credential
	reads       int
}

func (f *fakeSessions) GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error) {
	if a, ok := f.agents[id]; ok {
		return a, nil
	}
	return &core.Agent{ID: id, Version: version, Model: "anthropic/x"}, nil
}

func (f *fakeSessions) GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error) {
	if c, ok := f.credentials[id]; ok {
		return c, nil, nil
	}
	return nil, nil, fmt.Errorf("credential %s: %w", id, core.ErrNotFound)
}

func (f *fakeSessions) GetSession(ctx context.Context, id string) (*core.Session, error) {
	f.reads++
	if s, ok := f.m[id]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
}

func newGrants() (*grantSource, *fakeVault, *fakeSessions) {
	sessions := &fakeSessions{m: map[string]*core.Session{
		"sesn_gh":    {ID: "sesn_gh", Origin: &core.Origin{Provider: "github", Key: "github:acme/widgets#7"}},
		"sesn_forge": {ID: "sesn_forge", Origin: &core.Origin{Provider: "forge", Key: "forge:acme/gadgets#1"}},
		"sesn_slack": {ID: "sesn_slack", Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1.2"}},
		"sesn_api":   {ID: "sesn_api"},
		"sesn_acp":   {ID: "sesn_acp", Agent: core.AgentRef{ID: "agt_acp", Version: 1}, Origin: &core.Origin{Provider: "github", Key: "github:acme/widgets#8"}},
		"sesn_lost":  {ID: "sesn_lost", Agent: core.AgentRef{ID: "agt_lost", Version: 1}},
	}, agents: map[string]*core.Agent{
		"agt_acp":  {ID: "agt_acp", Version: 1, Runtime: core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"codex-acp"}, ModelCredential: "vcr_model"}},
		"agt_lost": {ID: "agt_lost", Version: 1, Runtime: core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"codex-acp"}, ModelCredential: "vcr_gone"}},
	}, credentials: map[string]*core.Credential{
		"vcr_model": {ID: "vcr_model", Hosts: []string{"api.openai.com:443"}},
	}}
	vault := &fakeVault{}
	granters := []GitGranter{fakeGranter{"github", "github.com:443"}, fakeGranter{"forge", "forge.example:443"}}
	return &grantSource{sessions: sessions, granters: granters, vault: vault, models: true, log: slog.New(slog.DiscardHandler)}, vault, sessions
}

func TestSessionGrant(t *testing.T) {
	tests := []struct {
		session string
		want    egress.Policy
	}{
		{"sesn_gh", egress.Policy{Hosts: []string{"github.com:443"}, Credentials: []string{"github-git:sesn_gh"}}},
		{"sesn_forge", egress.Policy{Hosts: []string{"forge.example:443"}, Credentials: []string{"forge-git:sesn_forge"}}},
		{"sesn_slack", egress.Policy{}},
		{"sesn_api", egress.Policy{}},
		// An ACP agent's model key: its hosts reached, injected, metered;
		// after the origin's grant.
		{"sesn_acp", egress.Policy{Hosts: []string{"github.com:443", "api.openai.com:443"}, Credentials: []string{"github-git:sesn_acp", "vcr_model"}, Metered: []string{"api.openai.com:443"}}},
		// A model credential that is gone grants nothing.
		{"sesn_lost", egress.Policy{}},
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			g, _, _ := newGrants()
			got, err := g.SessionGrant(t.Context(), tt.session)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Hosts, tt.want.Hosts) || !slices.Equal(got.Credentials, tt.want.Credentials) || !slices.Equal(got.Metered, tt.want.Metered) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("a session that is gone", func(t *testing.T) {
		g, _, _ := newGrants()
		if _, err := g.SessionGrant(t.Context(), "sesn_gone"); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("no granter reads no session", func(t *testing.T) {
		g, _, sessions := newGrants()
		g.granters, g.models = nil, false
		got, err := g.SessionGrant(t.Context(), "sesn_gh")
		if err != nil || len(got.Hosts) != 0 || len(got.Credentials) != 0 || sessions.reads != 0 {
			t.Errorf("got %+v, %v after %d reads, want nothing and no read", got, err, sessions.reads)
		}
	})
	t.Run("no granter still grants the model key", func(t *testing.T) {
		g, _, _ := newGrants()
		g.granters = nil
		got, err := g.SessionGrant(t.Context(), "sesn_acp")
		if err != nil || !slices.Equal(got.Credentials, []string{"vcr_model"}) {
			t.Errorf("got %+v, %v, want the model key alone", got, err)
		}
	})
}

// TestGrantCredentials: a granted id resolves at its granter and never
// leaves the proxy; every other id resolves in the vault.
func TestGrantCredentials(t *testing.T) {
	tests := []struct {
		name      string
		call      func(ctx context.Context, g *grantSource) (string, error)
		want      string
		wantErr   error
		wantVault []string
	}{
		{"a granted id's header at its granter", func(ctx context.Context, g *grantSource) (string, error) {
			n, v, err := g.Header(ctx, "forge-git:sesn_forge", "forge.example:443")
			return n + ": " + v, err
		}, "Authorization: forge forge-git:sesn_forge for forge.example:443", nil, nil},
		{"a vault id's header in the vault", func(ctx context.Context, g *grantSource) (string, error) {
			n, v, err := g.Header(ctx, "cred_01", "api.example:443")
			return n + ": " + v, err
		}, "X-Vault: cred_01 for api.example:443", nil, []string{"header cred_01"}},
		{"no token of a granted id", func(ctx context.Context, g *grantSource) (string, error) {
			return g.Token(ctx, "github-git:sesn_gh")
		}, "", core.ErrForbidden, nil},
		{"a vault id's token", func(ctx context.Context, g *grantSource) (string, error) {
			return g.Token(ctx, "cred_01")
		}, "vault cred_01", nil, []string{"token cred_01"}},
		{"refreshing a granted id does nothing", func(ctx context.Context, g *grantSource) (string, error) {
			return "", g.Refresh(ctx, "github-git:sesn_gh")
		}, "", nil, nil},
		{"a vault id refreshes in the vault", func(ctx context.Context, g *grantSource) (string, error) {
			return "", g.Refresh(ctx, "cred_01")
		}, "", nil, []string{"refresh cred_01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, vault, _ := newGrants()
			got, err := tt.call(t.Context(), g)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if !slices.Equal(vault.calls, tt.wantVault) {
				t.Errorf("vault asked %q, want %q", vault.calls, tt.wantVault)
			}
		})
	}
}
