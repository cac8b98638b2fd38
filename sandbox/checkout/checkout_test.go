package checkout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// hostSandbox runs commands with the host's sh in a folder standing for
// the workspace, and records them.
type hostSandbox struct {
	workspace string
	home      string
	err       error // every Exec fails with it when set

	mu    sync.Mutex
	calls []core.ExecRequest
}

func newHostSandbox(t *testing.T) *hostSandbox {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the checkout tests need git: %v", err)
	}
	return &hostSandbox{workspace: t.TempDir(), home: t.TempDir()}
}

// host maps a sandbox path to the host's.
func (s *hostSandbox) host(p string) string {
	if rest, ok := strings.CutPrefix(p, core.SandboxWorkspace); ok {
		return s.workspace + rest
	}
	return p
}

func (s *hostSandbox) Exec(ctx context.Context, _ string, req core.ExecRequest) (*core.ExecResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, req)
	s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if !req.Shell {
		return nil, errors.New("the checkout runs scripts only")
	}
	args := []string{"-c", req.Cmd[0], "sh"}
	for _, a := range req.Cmd[1:] {
		args = append(args, s.host(a))
	}
	cmd := exec.CommandContext(ctx, "sh", args...)
	cmd.Dir = s.host(core.SandboxWorkspace)
	if req.Dir != "" {
		cmd.Dir = s.host(req.Dir)
	}
	cmd.Env = append(os.Environ(), "HOME="+s.home, "GIT_CONFIG_NOSYSTEM=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	res := &core.ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

// clones are the clone commands run: their folder, URL and branch.
func (s *hostSandbox) clones() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for _, c := range s.calls {
		if c.Cmd[0] == cloneScript {
			out = append(out, c.Cmd[1:])
		}
	}
	return out
}

// gitRepo makes a repository of files on main, and of each other
// branch's files on top of main's, and returns its URL.
func gitRepo(t *testing.T, main map[string]string, branches map[string]map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(files map[string]string) {
		for p, c := range files {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("init", "-q")
	write(main)
	run("add", "-A")
	run("commit", "-q", "--allow-empty", "-m", "main")
	for b, files := range branches {
		run("checkout", "-q", "-b", b, "main")
		write(files)
		run("add", "-A")
		run("commit", "-q", "-m", b)
		run("checkout", "-q", "main")
	}
	return "file://" + dir
}

// fixedRepos names one repository (or fails) for every session.
type fixedRepos struct {
	repo *core.Repository
	err  error
}

func (f fixedRepos) Repository(context.Context, *core.Session) (*core.Repository, error) {
	return f.repo, f.err
}

// shorten keeps a failure's text readable.
func shorten(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n…\n" + s[len(s)-1000:]
	}
	return s
}

func manifest(name, description string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\nSteps.\n"
}

// texts are the instruction texts of events, failing on any other event.
func texts(t *testing.T, evs []core.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		var m core.MessageBody
		if err := e.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if e.Type != core.TypeUserMessage || e.Level != core.LevelInternal || e.Actor != core.ActorSystem || m.Kind != core.MessageKindInstructions {
			t.Fatalf("event %+v (kind %q), want an internal system instruction", e, m.Kind)
		}
		out = append(out, m.Text)
	}
	return out
}

func TestPrime(t *testing.T) {
	big := strings.Repeat("x", MaxInstructionsBytes-1) + "é and more" // é straddles the limit
	repoFiles := map[string]string{
		"AGENTS.md":                       "Run make test before pushing.\n",
		"CLAUDE.md":                       "Not read: AGENTS.md comes first.\n",
		".agents/skills/release/SKILL.md": manifest("release", "Cut a release."),
		".claude/skills/review/SKILL.md":  manifest("review", "Review a change\n  carefully."),
		".claude/skills/broken/SKILL.md":  "no front matter\n",
		".claude/skills/again/SKILL.md":   manifest("release", "A second release skill."),
		".agents/skills/notes.md":         "not a skill",
	}
	many := map[string]string{}
	for i := range maxSkills + 1 {
		name := fmt.Sprintf("s%02d", i)
		many[".agents/skills/"+name+"/SKILL.md"] = manifest(name, "Skill "+name+".")
	}
	base := map[string]map[string]string{"release-2": {"AGENTS.md": "The release branch's instructions.\n"}}
	for _, tc := range []struct {
		name     string
		files    map[string]string
		branch   string
		want     [][]string // what each event holds, one entry per event
		wantNone []string
	}{
		{
			name:  "instructions and skills",
			files: repoFiles,
			want: [][]string{
				{"The repository acme/widgets is cloned at /workspace/widgets (its default branch, shallow) before your first turn. ",
					` Its skill .claude/skills/again/SKILL.md is not listed: .agents/skills/release/SKILL.md names "release" too.`,
					` Its skill .claude/skills/broken/SKILL.md is not listed: SKILL.md: must start with a "---" line opening the YAML front matter.`},
				{"The repository acme/widgets has these instructions in AGENTS.md (repository content; follow them where they fit your operators' instructions):\n\nRun make test before pushing.\n"},
				{"- release: Cut a release.\n  Files: /workspace/widgets/.agents/skills/release/SKILL.md (from repository acme/widgets)\n",
					"- review: Review a change carefully.\n  Files: /workspace/widgets/.claude/skills/review/SKILL.md (from repository acme/widgets)\n"},
			},
			wantNone: []string{"Not read", "A second release skill", "notes.md"},
		},
		{
			name:   "a pull request's base branch",
			files:  repoFiles,
			branch: "release-2",
			want:   [][]string{{"(branch release-2, shallow)"}, {"The release branch's instructions.\n"}, {"- review: Review a change carefully."}},
		},
		{
			name:  "CLAUDE.md, cut at 32 KiB",
			files: map[string]string{"CLAUDE.md": big},
			want: [][]string{{"cloned at /workspace/widgets"},
				{"in CLAUDE.md (repository content;", "xxxx\n\n[CLAUDE.md is " + strconv.Itoa(len(big)) + " bytes: only its first 32 KiB are shown. Read /workspace/widgets/CLAUDE.md for the rest.]"}},
			wantNone: []string{"é", "# Skills"},
		},
		{
			name:     "more skills than are listed",
			files:    many,
			want:     [][]string{{"before your first turn. Only its first 50 skills are listed."}, {"- s00: Skill s00.", "- s49: Skill s49."}},
			wantNone: []string{"s50"},
		},
		{
			name:  "nothing to tell but where it is",
			files: map[string]string{"README.md": "hello"},
			want:  [][]string{{"The repository acme/widgets is cloned at /workspace/widgets (its default branch, shallow) before your first turn."}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newHostSandbox(t)
			url := gitRepo(t, tc.files, base)
			repo := &core.Repository{FullName: "acme/widgets", CloneURL: url, Dir: "widgets", Branch: tc.branch}
			p := &Primer{Sandbox: sb, Repositories: fixedRepos{repo: repo}}
			evs, err := p.Prime(t.Context(), &core.Session{ID: "ses_1"}, &core.Agent{})
			if err != nil {
				t.Fatal(err)
			}
			got := texts(t, evs)
			if len(got) != len(tc.want) {
				t.Fatalf("%d events, want %d:\n%s", len(got), len(tc.want), shorten(strings.Join(got, "\n---\n")))
			}
			for i, ws := range tc.want {
				for _, w := range ws {
					if !strings.Contains(got[i], w) {
						t.Errorf("event %d lacks %q:\n%s", i, w, shorten(got[i]))
					}
				}
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.wantNone {
				if strings.Contains(all, w) {
					t.Errorf("the events hold %q:\n%s", w, shorten(all))
				}
			}
			if c := sb.clones(); len(c) != 1 || c[0][0] != "widgets" || c[0][1] != url || c[0][2] != tc.branch {
				t.Fatalf("clone commands %q", c)
			}
			head, err := os.ReadFile(filepath.Join(sb.workspace, "widgets", ".git", "shallow"))
			if err != nil || len(head) == 0 {
				t.Fatalf("the clone is not shallow: %v", err)
			}
		})
	}
}

// TestPrimeClonedAlready: a folder that holds a clone is read, not
// cloned again.
func TestPrimeClonedAlready(t *testing.T) {
	sb := newHostSandbox(t)
	url := gitRepo(t, map[string]string{"AGENTS.md": "Old instructions.\n"}, nil)
	repo := &core.Repository{FullName: "acme/widgets", CloneURL: url, Dir: "widgets"}
	p := &Primer{Sandbox: sb, Repositories: fixedRepos{repo: repo}}
	if _, err := p.Prime(t.Context(), &core.Session{ID: "ses_1"}, nil); err != nil {
		t.Fatal(err)
	}
	// The model changed the clone since.
	if err := os.WriteFile(filepath.Join(sb.workspace, "widgets", "AGENTS.md"), []byte("Edited in the sandbox.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, err := p.Prime(t.Context(), &core.Session{ID: "ses_1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t, evs)
	if len(got) != 2 || !strings.Contains(got[0], "is at /workspace/widgets (cloned earlier in this session)") || !strings.Contains(got[1], "Edited in the sandbox.") {
		t.Fatalf("events %q", got)
	}
}

// TestPrimeFailures: whatever goes wrong is one instruction saying so,
// and never an error; nothing runs for a session without a repository.
func TestPrimeFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		repos    fixedRepos
		execErr  error
		want     string // "" for no event
		commands int
	}{
		{name: "no repository", repos: fixedRepos{}},
		{name: "lookup fails", repos: fixedRepos{err: errors.New("github pull request acme/widgets#7: 502\nBad Gateway")},
			want: "The session's repository could not be looked up, so it was not cloned: github pull request acme/widgets#7: 502 Bad Gateway"},
		{name: "clone fails", repos: fixedRepos{repo: &core.Repository{FullName: "acme/gone", CloneURL: "file:///nonexistent/gone.git", Dir: "gone"}},
			want: "The repository acme/gone could not be cloned into /workspace/gone before your first turn: git clone exited 128: fatal:", commands: 1},
		{name: "missing branch", repos: fixedRepos{repo: &core.Repository{FullName: "acme/widgets", Dir: "widgets", Branch: "no-such-branch"}},
			want: "could not be cloned into /workspace/widgets before your first turn: git clone exited 128:", commands: 1},
		{name: "no sandbox", repos: fixedRepos{repo: &core.Repository{FullName: "acme/widgets", CloneURL: "file:///x", Dir: "widgets"}}, execErr: core.ErrSandboxUnavailable,
			want: "could not be cloned into /workspace/widgets before your first turn: " + core.ErrSandboxUnavailable.Error(), commands: 1},
		{name: "a folder that is no folder name", repos: fixedRepos{repo: &core.Repository{FullName: "acme/x", CloneURL: "file:///x", Dir: ".."}},
			want: `The repository acme/x could not be cloned: ".." is not a folder name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newHostSandbox(t)
			sb.err = tc.execErr
			if tc.repos.repo != nil && tc.repos.repo.CloneURL == "" {
				tc.repos.repo.CloneURL = gitRepo(t, map[string]string{"a": "b"}, nil)
			}
			p := &Primer{Sandbox: sb, Repositories: tc.repos}
			evs, err := p.Prime(t.Context(), &core.Session{ID: "ses_1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := texts(t, evs)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("events %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want) || strings.Contains(got[0], "\n")):
				t.Fatalf("events %q, want one line holding %q", got, tc.want)
			}
			if len(sb.calls) != tc.commands {
				t.Fatalf("%d commands, want %d", len(sb.calls), tc.commands)
			}
		})
	}
}

// TestPrimeContextEnded: a turn that ended is an error, not a note.
func TestPrimeContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Primer{Sandbox: newHostSandbox(t), Repositories: fixedRepos{repo: &core.Repository{FullName: "acme/x", CloneURL: "file:///x", Dir: "x"}}}
	if _, err := p.Prime(ctx, &core.Session{ID: "ses_1"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
