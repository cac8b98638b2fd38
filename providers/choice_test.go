package providers

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
)

// chooser is a RepositoryChooser that answers pick, and records what it
// was asked.
type chooser struct {
	keyedProvider
	pick  string
	asked *[][]string
}

func (c chooser) ChooseRepository(_ context.Context, _ *core.Session, host string, repos []string) (string, error) {
	*c.asked = append(*c.asked, append([]string{host}, repos...))
	return c.pick, nil
}

// TestChooseRepository: a session from a RepositoryChooser works on the
// one repository its agent is granted without asking anyone; among
// several, on the one its platform picks (asked with the git host's
// name), cloned over HTTPS; when the platform asked the people instead,
// on none. The model is told which, or that the people were asked.
func TestChooseRepository(t *testing.T) {
	ctx := t.Context()
	st, saveIn := installStore(t)
	// A Linear session reaches GitHub's repositories in one tenant group.
	save := func(in *core.Installation) *core.Installation {
		t.Helper()
		saved, err := st.UpdateInstallation(ctx, saveIn(in).ID, func(in *core.Installation) error { in.TenantGroup = "acme"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	lin := save(&core.Installation{Provider: "linear", ExternalID: "org1", Name: "acme"})
	gh := save(&core.Installation{Provider: "github", ExternalID: "99", Name: "acme"})
	sess := &core.Session{ID: "ses_lin", Origin: &core.Origin{Provider: "linear", Key: "linear:org1:as-1"}}
	for _, tc := range []struct {
		name  string
		repos []string
		pick  string
		asked [][]string
		repo  *core.Repository
		note  string
	}{
		{"one granted repository", []string{"acme/app"}, "", nil,
			&core.Repository{FullName: "acme/app", CloneURL: "https://git.example/acme/app.git", Dir: "app"},
			"This session is about the repository acme/app (of those you may work on: acme/app). Work there."},
		{"the platform picks one", []string{"acme/app", "acme/api"}, "acme/api", [][]string{{"git.example", "acme/app", "acme/api"}},
			&core.Repository{FullName: "acme/api", CloneURL: "https://git.example/acme/api.git", Dir: "api"},
			"This session is about the repository acme/api (of those you may work on: acme/app, acme/api). Work there."},
		{"the platform asked the people", []string{"acme/app", "acme/api"}, "", [][]string{{"git.example", "acme/app", "acme/api"}}, nil,
			"Which of the repositories you may work on (acme/app, acme/api) this session is about is not clear, so the people were asked to choose. " +
				"Change none of them before they answer: the answer comes as their next message."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked [][]string
			s := &Set{store: st, log: slog.New(slog.DiscardHandler), list: []Provider{
				chooser{keyedProvider{named("linear"), map[string]*core.Installation{"org1": lin}}, tc.pick, &asked},
				codeHost{keyedProvider{named("github"), map[string]*core.Installation{"acme": gh}}, server.NewMCPServer("github", "1")},
			}}
			a := &core.Agent{Name: "coder", RepositoryAccess: &core.RepositoryAccess{Installation: gh.ID, Repositories: tc.repos}}
			c, err := s.chooseRepository(ctx, sess, a)
			if err != nil || c == nil {
				t.Fatalf("choice %+v, %v", c, err)
			}
			if (c.Repo == nil) != (tc.repo == nil) || c.Repo != nil && *c.Repo != *tc.repo {
				t.Fatalf("repository %+v, want %+v", c.Repo, tc.repo)
			}
			if got := choiceNote(c); got != tc.note {
				t.Fatalf("note %q, want %q", got, tc.note)
			}
			if !slices.EqualFunc(asked, tc.asked, slices.Equal) {
				t.Fatalf("the platform was asked %q, want %q", asked, tc.asked)
			}
		})
	}
	t.Run("a session from elsewhere", func(t *testing.T) {
		s := &Set{store: st, log: slog.New(slog.DiscardHandler), list: []Provider{keyedProvider{named("linear"), nil}}}
		a := &core.Agent{Name: "coder", RepositoryAccess: &core.RepositoryAccess{Installation: gh.ID, Repositories: []string{"acme/app"}}}
		if c, err := s.chooseRepository(ctx, sess, a); c != nil || err != nil {
			t.Fatalf("a platform that does not choose: %+v, %v", c, err)
		}
	})
}

func TestCloneURL(t *testing.T) {
	for hp, want := range map[string]string{
		"github.com:443":     "https://github.com/acme/app.git",
		"git.internal:80":    "http://git.internal/acme/app.git",
		"192.168.1.2:8443":   "https://192.168.1.2:8443/acme/app.git",
		"github.example.com": "https://github.example.com/acme/app.git",
	} {
		if got := cloneURL(hp, "acme/app"); got != want {
			t.Errorf("cloneURL(%q) = %q, want %q", hp, got, want)
		}
	}
}
