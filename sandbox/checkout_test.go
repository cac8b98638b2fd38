package sandbox

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox/checkout"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// oneRepository names the same repository for every session.
type oneRepository struct{ repo *core.Repository }

func (o oneRepository) Repository(context.Context, *core.Session) (*core.Repository, error) {
	return o.repo, nil
}

// TestCheckoutThroughProxy: before the first turn the repository is
// cloned in the sandbox through the egress proxy, which authenticates to
// the git host, and its instructions and skills are read from the clone;
// a session whose sandbox may not reach the host is told the clone
// failed.
func TestCheckoutThroughProxy(t *testing.T) {
	grants := grantTable{}
	d, s := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.Egress.Grants = grants })
	fake := fakegithub.Start(t)
	git := fake.StartGit(t, sandboximage.HostBridgeAddress(t))
	git.CreateRepo(t, "acme/widgets", map[string]string{
		"AGENTS.md":                    "Run make check first.\n",
		".agents/skills/ship/SKILL.md": "---\nname: ship\ndescription: Ship a release.\n---\nSteps.\n",
	})
	if !s.roots.AppendCertsFromPEM(git.CAPEM) {
		t.Fatal("the git host's CA does not parse")
	}
	hostport := strings.TrimPrefix(git.URL, "https://")
	credID := "git-" + randomHex(4)
	tok := fake.IssueToken(t, 1, "widgets")
	s.creds[credID] = fakeCredential{hosts: []string{hostport}, name: "Authorization",
		value: "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok))}
	granted, plain := newSession(), newSession()
	grants[granted] = egress.Policy{Hosts: []string{hostport}, Credentials: []string{credID}}

	p := &checkout.Primer{Sandbox: d, Repositories: oneRepository{&core.Repository{FullName: "acme/widgets", CloneURL: git.URL + "/acme/widgets.git", Dir: "widgets"}}}
	texts := func(session string) string {
		t.Helper()
		evs, err := p.Prime(context.Background(), &core.Session{ID: session}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			var m core.MessageBody
			if err := e.Decode(&m); err != nil || m.Kind != core.MessageKindInstructions {
				t.Fatalf("event %+v: %v", e, err)
			}
			out = append(out, m.Text)
		}
		return strings.Join(out, "\n---\n")
	}

	got := texts(granted)
	for _, want := range []string{
		"The repository acme/widgets is cloned at /workspace/widgets (its default branch, shallow)",
		"instructions in AGENTS.md (repository content; follow them where they fit your operators' instructions):\n\nRun make check first.\n",
		"- ship: Ship a release.\n  Files: /workspace/widgets/.agents/skills/ship/SKILL.md (from repository acme/widgets)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the granted session's instructions lack %q:\n%s", want, got)
		}
	}
	res, err := d.Exec(context.Background(), granted, core.ExecRequest{Cmd: []string{"cd /workspace/widgets && git rev-parse --is-shallow-repository && git remote get-url origin && stat -c %u .git"}, Shell: true, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if want := "true\n" + git.URL + "/acme/widgets.git\n1000\n"; string(res.Stdout) != want {
		t.Fatalf("the clone: %q %q, want %q", res.Stdout, res.Stderr, want)
	}
	if len(git.Tokens()) == 0 {
		t.Fatal("the git host saw no token: the proxy did not authenticate the clone")
	}

	if got := texts(plain); !strings.HasPrefix(got, "The repository acme/widgets could not be cloned into /workspace/widgets before your first turn: git clone exited 128: fatal:") || strings.Contains(got, "\n") {
		t.Fatalf("a session without the grant: %q", got)
	}
}
