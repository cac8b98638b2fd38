package providers

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// codeHost is a RepositoryHost that holds any repository of the account
// its installation is named after.
type codeHost struct {
	keyedProvider
	srv *server.MCPServer
}

func (h codeHost) GitGrant(s *core.Session) ([]string, string, bool) {
	if s.Origin == nil || s.Origin.Provider != h.Name() {
		return nil, "", false
	}
	return []string{"git.example:443"}, "host-git:" + s.Origin.Key, true
}

func (codeHost) IsGitCredential(id string) bool { return strings.HasPrefix(id, "host-git:") }

func (codeHost) GitHeader(context.Context, string, string) (string, string, error) {
	return "Authorization", "Basic x", nil
}

func (codeHost) CheckRepositories(_ context.Context, in *core.Installation, repos []string) error {
	for _, r := range repos {
		if !strings.HasPrefix(r, in.Name+"/") {
			return errors.Join(errors.New(r+" is not "+in.Name+"'s"), core.ErrInvalid)
		}
	}
	return nil
}

func (h codeHost) GrantedToolServer(context.Context, *core.Session, Grant) (*server.MCPServer, error) {
	return h.srv, nil
}

func (codeHost) GrantedGit(g Grant) ([]string, string) {
	return []string{"git.example:443"}, "host-git:" + g.Installation.ExternalID + ":" + strings.Join(g.Repositories, ",")
}

// installStore is a store, and what saves an installation in it.
func installStore(t *testing.T) (*bolt.Store, func(*core.Installation) *core.Installation) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, func(in *core.Installation) *core.Installation {
		t.Helper()
		saved, err := st.SaveInstallation(t.Context(), in, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
}

// TestRepositoryGrant: an agent's repository access reaches a session
// from another platform only within a tenant group, an API session
// always, and a session of the code host never (it keeps its own
// repository); the git grant and the tool server follow it.
func TestRepositoryGrant(t *testing.T) {
	ctx := t.Context()
	st, save := installStore(t)
	slackT1 := save(&core.Installation{Provider: "slack", ExternalID: "T1", Name: "acme-chat"})
	gh := save(&core.Installation{Provider: "github", ExternalID: "99", Name: "acme"})
	srv := server.NewMCPServer("github", "1")
	s := &Set{store: st, log: slog.New(slog.DiscardHandler), list: []Provider{
		keyedProvider{named("slack"), map[string]*core.Installation{"T1": slackT1}},
		codeHost{keyedProvider{named("github"), map[string]*core.Installation{"acme": gh}}, srv},
	}}
	agent := func(ra *core.RepositoryAccess) *core.Agent { return &core.Agent{Name: "coder", RepositoryAccess: ra} }
	access := &core.RepositoryAccess{Installation: gh.ID, Repositories: []string{"acme/app"}}
	fromSlack := &core.Session{ID: "ses_slack", Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1.2"}}
	fromAPI := &core.Session{ID: "ses_api"}
	fromGitHub := &core.Session{ID: "ses_gh", Origin: &core.Origin{Provider: "github", Key: "github:acme/app#3"}}
	group := func(name string) {
		for _, in := range []*core.Installation{slackT1, gh} {
			in.TenantGroup = name // the keyed provider's copy
			if _, err := st.UpdateInstallation(ctx, in.ID, func(in *core.Installation) error { in.TenantGroup = name; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		sess    *core.Session
		a       *core.Agent
		group   string
		granted bool
		err     error
	}{
		{"a Slack session, no tenant group", fromSlack, agent(access), "", false, core.ErrForbidden},
		{"a Slack session in the tenant group", fromSlack, agent(access), "acme", true, nil},
		{"an API session", fromAPI, agent(access), "", true, nil},
		{"the code host's own session", fromGitHub, agent(access), "acme", false, nil},
		{"an agent without access", fromSlack, agent(nil), "acme", false, nil},
		{"an installation that is gone", fromAPI, agent(&core.RepositoryAccess{Installation: "ins_gone", Repositories: []string{"acme/app"}}), "", false, core.ErrInvalid},
		{"a chat installation", fromAPI, agent(&core.RepositoryAccess{Installation: slackT1.ID, Repositories: []string{"acme/app"}}), "", false, core.ErrInvalid},
		{"another account's repository", fromAPI, agent(&core.RepositoryAccess{Installation: gh.ID, Repositories: []string{"evil/app"}}), "", false, core.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group(tc.group)
			g, host, err := s.RepositoryGrant(ctx, tc.sess, tc.a)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if (g != nil) != tc.granted {
				t.Fatalf("grant %+v, want granted %v", g, tc.granted)
			}
			if g != nil && (host.Name() != "github" || g.Installation.ID != gh.ID || g.Repositories[0] != "acme/app") {
				t.Fatalf("grant %+v of %s", g, host.Name())
			}
			servers, serr := s.grantedServer(ctx, tc.sess, tc.a)
			if serr != nil || (len(servers) == 1) != tc.granted {
				t.Fatalf("servers %v, %v; want one when granted", servers, serr)
			}
			if tc.granted && servers[0].(mcpbridge.InProcess).Server != srv {
				t.Fatalf("server %+v, want the host's", servers[0])
			}
		})
	}

	t.Run("the sandbox's git grant", func(t *testing.T) {
		group("")
		a, err := st.CreateAgent(ctx, &core.Agent{Name: "coder", Model: "anthropic/x", RepositoryAccess: access})
		if err != nil {
			t.Fatal(err)
		}
		api := &core.Session{ID: "ses_api", Agent: core.AgentRef{ID: a.ID, Version: a.Version}}
		if hosts, cred, ok := s.GitGrant(ctx, api); !ok || hosts[0] != "git.example:443" || cred != "host-git:99:acme/app" || !s.IsGitCredential(cred) {
			t.Fatalf("API session: %v %q %v", hosts, cred, ok)
		}
		gs := *fromGitHub
		gs.Agent = api.Agent
		if _, cred, ok := s.GitGrant(ctx, &gs); !ok || cred != "host-git:github:acme/app#3" {
			t.Fatalf("the host's own session: %q %v, want its origin's", cred, ok)
		}
		sl := *fromSlack
		sl.Agent = api.Agent
		if _, cred, ok := s.GitGrant(ctx, &sl); ok {
			t.Fatalf("a Slack session outside the tenant group got %q", cred)
		}
		if _, _, err := s.GitHeader(ctx, "vault_1", "git.example:443"); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("a vault id: %v", err)
		}
	})
}
