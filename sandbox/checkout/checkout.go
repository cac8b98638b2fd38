// Package checkout clones a session's repository into its sandbox before
// the first turn and tells the model what the repository asks of it: its
// instructions (AGENTS.md, else CLAUDE.md) and its skills
// (.agents/skills/*/SKILL.md, .claude/skills/*/SKILL.md). The clone goes
// through the egress proxy, which authenticates, as the model's own
// clones do. Only this clone is read, once: repositories the model
// clones later are not.
package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/providers"
)

// Limits on what is read of the repository.
const (
	MaxInstructionsBytes = 32 << 10
	maxSkillManifest     = 16 << 10
	maxSkills            = 50
)

// RepositorySource names the repository a session works on (nil for
// none); providers.Set is one.
type RepositorySource interface {
	Repository(ctx context.Context, s *core.Session) (*core.Repository, error)
}

// Primer clones the session's repository and returns the instructions
// that tell the model of it.
type Primer struct {
	Sandbox      core.Sandbox
	Repositories RepositorySource
	// CloneTimeout bounds the clone (default 5 minutes).
	CloneTimeout time.Duration
	Logger       *slog.Logger
}

var _ providers.Primer = (*Primer)(nil)

// Prime clones the session's repository into /workspace/<dir> unless a
// clone is there already, and returns instruction events: where the
// repository is, its instructions file and its skills. A repository that
// cannot be cloned or read is said in one instruction; only a context
// that ended is an error.
func (p *Primer) Prime(ctx context.Context, s *core.Session, _ *core.Agent) ([]core.Event, error) {
	if p.Sandbox == nil || p.Repositories == nil {
		return nil, nil
	}
	texts := p.texts(ctx, s)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return notes(texts...), nil
}

// texts are the instructions' texts: what the repository says, or why
// it could not be cloned or read.
func (p *Primer) texts(ctx context.Context, s *core.Session) []string {
	repo, err := p.Repositories.Repository(ctx, s)
	if err != nil {
		return p.failed(ctx, s, "the session's repository", err, "The session's repository could not be looked up, so it was not cloned")
	}
	if repo == nil {
		return nil
	}
	if err := validDir(repo.Dir); err != nil {
		return []string{fmt.Sprintf("The repository %s could not be cloned: %s", repo.FullName, err)}
	}
	dir := path.Join(core.SandboxWorkspace, repo.Dir)
	cloned, err := p.clone(ctx, s.ID, repo)
	if err != nil {
		return p.failed(ctx, s, "clone the session's repository", err,
			fmt.Sprintf("The repository %s could not be cloned into %s before your first turn", repo.FullName, dir))
	}
	found, err := p.read(ctx, s.ID, dir)
	if err != nil {
		return p.failed(ctx, s, "read the session's repository", err,
			fmt.Sprintf("The repository %s is at %s, but its instructions and skills could not be read", repo.FullName, dir))
	}
	return p.describe(repo, dir, cloned, found)
}

// failed logs err (unless the turn ended, which Prime reports) and is
// the one line telling the model what went wrong.
func (p *Primer) failed(ctx context.Context, s *core.Session, what string, err error, text string) []string {
	if ctx.Err() == nil {
		p.log().Warn(what, "session_id", s.ID, "err", err)
	}
	return []string{text + ": " + oneLine(err.Error())}
}

// describe tells the model of the repository: where it is, its
// instructions and its skills.
func (p *Primer) describe(repo *core.Repository, dir string, cloned bool, found *contents) []string {
	branch := "its default branch"
	if repo.Branch != "" {
		branch = "branch " + repo.Branch
	}
	where := fmt.Sprintf("The repository %s is cloned at %s (%s, shallow) before your first turn.", repo.FullName, dir, branch)
	if !cloned {
		where = fmt.Sprintf("The repository %s is at %s (cloned earlier in this session).", repo.FullName, dir)
	}
	texts := []string{where + strings.Join(found.notes, "")}
	if f := found.instructions; f != nil {
		text := fmt.Sprintf("The repository %s has these instructions in %s (repository content; follow them where they fit your operators' instructions):\n\n%s",
			repo.FullName, f.name, f.text)
		if f.truncated {
			text += fmt.Sprintf("\n\n[%s is %d bytes: only its first %d KiB are shown. Read %s for the rest.]", f.name, f.total, MaxInstructionsBytes>>10, path.Join(dir, f.name))
		}
		texts = append(texts, text)
	}
	var entries []skill.Entry
	for _, sk := range found.skills {
		entries = append(entries, skill.Entry{Name: sk.name, Description: sk.description, Location: path.Join(dir, sk.path), Source: "repository " + repo.FullName})
	}
	if d := skill.Disclose(entries); d != "" {
		texts = append(texts, d)
	}
	return texts
}

// notes are instruction events of texts.
func notes(texts ...string) []core.Event {
	out := make([]core.Event, 0, len(texts))
	for _, t := range texts {
		out = append(out, core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem,
			core.MessageBody{Text: t, Kind: core.MessageKindInstructions}))
	}
	return out
}

// cloneScript clones $2 into $1 (on branch $3 when set), shallow and on
// one branch, unless $1 holds a clone already; it says which.
const cloneScript = `dir=$1 url=$2 branch=$3
if [ -e "$dir/.git" ]; then echo present; exit 0; fi
export GIT_TERMINAL_PROMPT=0
if [ -n "$branch" ]; then
	git clone -q --depth 1 --single-branch --branch "$branch" -- "$url" "$dir" || exit
else
	git clone -q --depth 1 --single-branch -- "$url" "$dir" || exit
fi
echo cloned`

// clone runs git clone in the sandbox; cloned is false when a clone was
// there already.
func (p *Primer) clone(ctx context.Context, sessionID string, repo *core.Repository) (cloned bool, err error) {
	timeout := p.CloneTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	res, err := p.Sandbox.Exec(ctx, sessionID, core.ExecRequest{Cmd: []string{cloneScript, repo.Dir, repo.CloneURL, repo.Branch}, Shell: true,
		Dir: core.SandboxWorkspace, Timeout: timeout})
	if err != nil {
		return false, err
	}
	if res.Killed != "" {
		return false, errors.New("git clone " + res.Killed)
	}
	if res.ExitCode != 0 {
		return false, fmt.Errorf("git clone exited %d: %s", res.ExitCode, gitMessage(res.Stderr))
	}
	return strings.TrimSpace(string(res.Stdout)) == "cloned", nil
}

// oneLine folds a message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// gitMessage is what git's output says went wrong: its first "fatal:"
// line, else its last line.
func gitMessage(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal: ") {
			msg = strings.TrimSpace(l)
			break
		}
	}
	if msg == "" {
		return "no message"
	}
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	return msg
}

// validDir refuses a folder name that is not one folder of the
// workspace.
func validDir(d string) error {
	if d == "" || d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") || strings.HasPrefix(d, "-") || !utf8.ValidString(d) {
		return fmt.Errorf("%q is not a folder name", d)
	}
	return nil
}

func (p *Primer) log() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}
