package checkout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/skill"
)

// readScript prints, in the clone $1, the instructions file and every
// skill's SKILL.md, each as "<kind> <bytes shown> <size> <path>" and a
// NUL, then its first bytes: a record nothing in a file can break.
// Past maxSkills it prints a "more" record and stops.
const readScript = `cd "$1" || exit
emit() {
	total=$(($(wc -c < "$2")))
	n=$total
	if [ "$n" -gt "$3" ]; then n=$3; fi
	printf '%s %s %s %s\0' "$1" "$n" "$total" "$2"
	head -c "$n" -- "$2"
}
for f in AGENTS.md CLAUDE.md; do
	if [ -f "$f" ]; then emit i "$f" "$2"; break; fi
done
i=0
for f in .agents/skills/*/SKILL.md .claude/skills/*/SKILL.md; do
	[ -f "$f" ] || continue
	i=$((i+1))
	if [ "$i" -gt "$4" ]; then printf 'more 0 0 -\0'; break; fi
	emit s "$f" "$3"
done
true`

// contents is what was found in the clone.
type contents struct {
	instructions *file
	skills       []repoSkill
	notes        []string // sentences on what was left out
}

type file struct {
	name      string
	text      string
	total     int64
	truncated bool
}

type repoSkill struct {
	name, description string
	path              string // SKILL.md's, relative to the clone
}

// read finds the instructions file and the skills of the clone at dir.
func (p *Primer) read(ctx context.Context, sessionID, dir string) (*contents, error) {
	res, err := p.Sandbox.Exec(ctx, sessionID, core.ExecRequest{
		Cmd:   []string{readScript, dir, strconv.Itoa(MaxInstructionsBytes), strconv.Itoa(maxSkillManifest), strconv.Itoa(maxSkills)},
		Shell: true, Timeout: time.Minute, MaxOutput: 2 * (MaxInstructionsBytes + maxSkills*(maxSkillManifest+512)),
	})
	switch {
	case err != nil:
		return nil, err
	case res.Killed != "":
		return nil, errors.New(res.Killed)
	case res.ExitCode != 0:
		return nil, fmt.Errorf("exit %d: %s", res.ExitCode, gitMessage(res.Stderr))
	case res.StdoutOmitted > 0:
		return nil, errors.New("more output than expected")
	}
	return parse(res.Stdout)
}

// parse reads readScript's records.
func parse(out []byte) (*contents, error) {
	c := &contents{}
	byName := map[string]string{}
	for len(out) > 0 {
		head, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			return nil, errors.New("a record without its header")
		}
		fields := strings.SplitN(string(head), " ", 4)
		if len(fields) != 4 {
			return nil, fmt.Errorf("a malformed record header %q", head)
		}
		n, err1 := strconv.Atoi(fields[1])
		total, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil || n < 0 || n > len(rest) {
			return nil, fmt.Errorf("a malformed record header %q", head)
		}
		kind, name, body := fields[0], fields[3], rest[:n]
		out = rest[n:]
		switch kind {
		case "i":
			c.instructions = &file{name: name, text: validPrefix(body), total: total, truncated: int64(n) < total}
		case "s":
			c.addSkill(name, body, byName)
		case "more":
			c.notes = append(c.notes, fmt.Sprintf(" Only its first %d skills are listed.", maxSkills))
		default:
			return nil, fmt.Errorf("a record of unknown kind %q", kind)
		}
	}
	return c, nil
}

// addSkill lists the skill whose SKILL.md at path says body, or notes
// why not.
func (c *contents) addSkill(path string, body []byte, byName map[string]string) {
	m, err := skill.ParseManifest(body)
	if err != nil {
		c.notes = append(c.notes, fmt.Sprintf(" Its skill %s is not listed: %s.", path, oneLine(strings.TrimSuffix(err.Error(), ": "+core.ErrInvalid.Error()))))
		return
	}
	if first, dup := byName[m.Name]; dup {
		c.notes = append(c.notes, fmt.Sprintf(" Its skill %s is not listed: %s names %q too.", path, first, m.Name))
		return
	}
	byName[m.Name] = path
	c.skills = append(c.skills, repoSkill{name: m.Name, description: m.Description, path: path})
}

// validPrefix is b as text, without a character cut in two at its end.
func validPrefix(b []byte) string {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return string(b)
}
