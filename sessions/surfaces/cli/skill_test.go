package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/fixtures/fakeskills"
	"github.com/switchboardhq/switchboard/sessions/skills"
)

// skillServer serves the skill endpoints over a fake store to the admin
// token "t".
func skillServer(t *testing.T, maxBytes int64) (*fakeskills.Store, string) {
	t.Helper()
	store := fakeskills.New()
	mux := http.NewServeMux()
	(&skills.Handler{Store: store, MaxBytes: maxBytes}).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := core.Principal{Admin: r.Header.Get("Authorization") == "Bearer t"}
		mux.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(srv.Close)
	return store, srv.URL
}

// runSkill runs `switchboard skill …` against url and returns the exit
// code, stdout and stderr.
func runSkill(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	code := Skill(Defaults{URL: url}).Run(context.Background(), env, append(args, "--url", url, "--token", "t"))
	return code, out.String(), errOut.String()
}

// skillFolder writes a skill folder: SKILL.md naming it, and files.
func skillFolder(t *testing.T, name, description string, kv ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := append([]string{"SKILL.md", "---\nname: " + name + "\ndescription: " + description + "\n---\n# " + name + "\n"}, kv...)
	for i := 0; i < len(files); i += 2 {
		p := filepath.Join(dir, filepath.FromSlash(files[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(files[i+1]), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSkillCommands(t *testing.T) {
	store, url := skillServer(t, 0)
	dir := skillFolder(t, "deploy", "Ship a release.", "scripts/run.sh", "echo run", "docs/ref.md", "# Ref", "docs/a b?.md", "spaced")

	code, out, errOut := runSkill(t, url, "create", dir)
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"name:        deploy", "version:     1", "description: Ship a release.", "SKILL.md", "docs/ref.md", "scripts/run.sh  8      executable"} {
		if !strings.Contains(out, want) {
			t.Errorf("create printed no %q:\n%s", want, out)
		}
	}
	s, err := store.GetSkill(context.Background(), "deploy", 1)
	if err != nil || len(s.Files) != 4 {
		t.Fatalf("stored %+v, %v", s, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: deploy\ndescription: Ship it.\n---\nv2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runSkill(t, url, "update", "deploy", dir, "--json"); code != 0 || !strings.Contains(out, `"version": 2`) {
		t.Fatalf("update: exit %d: %s %s", code, out, errOut)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "deploy  2        4      "},
		{[]string{"get", "deploy"}, "description: Ship it."},
		{[]string{"get", "deploy", "--version", "1"}, "description: Ship a release."},
		{[]string{"get", "deploy", "SKILL.md"}, "---\nname: deploy\ndescription: Ship it.\n---\nv2\n"},
		{[]string{"get", "deploy", "--version", "1", "scripts/run.sh"}, "echo run"},
		{[]string{"get", "deploy", "docs/a b?.md"}, "spaced"},
	} {
		code, out, errOut := runSkill(t, url, tt.args...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("skill %s: exit %d, %q, %s; want %q", strings.Join(tt.args, " "), code, out, errOut, tt.want)
		}
	}
	if _, out, _ := runSkill(t, url, "get", "deploy", "SKILL.md"); strings.Contains(out, "files:") {
		t.Errorf("a file is printed as it is: %q", out)
	}

	store.Pin(s.ID, `agent "triage" (agt_1)`)
	if code, _, errOut := runSkill(t, url, "delete", "deploy"); code != 1 || !strings.Contains(errOut, `skill "deploy" is pinned by agent "triage" (agt_1)`) {
		t.Fatalf("delete pinned: exit %d: %s", code, errOut)
	}
	store.Pin(s.ID, "")
	if code, out, errOut := runSkill(t, url, "delete", s.ID); code != 0 || out != "deleted "+s.ID+"\n" {
		t.Fatalf("delete: exit %d: %q %s", code, out, errOut)
	}
	if code, _, errOut := runSkill(t, url, "get", "deploy", "x/y"); code != 1 || !strings.Contains(errOut, `skill "deploy" not found`) {
		t.Fatalf("get deleted: exit %d: %s", code, errOut)
	}
}

func TestSkillRefusals(t *testing.T) {
	store, url := skillServer(t, 2048)
	withLink := skillFolder(t, "linked", "l")
	if err := os.Symlink("/etc/passwd", filepath.Join(withLink, "passwd")); err != nil {
		t.Fatal(err)
	}
	withFifo := skillFolder(t, "piped", "p")
	if err := syscall.Mkfifo(filepath.Join(withFifo, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"symlink", []string{"create", withLink}, 1, filepath.Join(withLink, "passwd") + " is a symbolic link"},
		{"fifo", []string{"create", withFifo}, 1, filepath.Join(withFifo, "pipe") + " is a special file"},
		{"no folder", []string{"create", filepath.Join(t.TempDir(), "none")}, 1, "skill folder:"},
		{"a file, not a folder", []string{"create", filepath.Join(withLink, "SKILL.md")}, 1, "is not a folder"},
		{"over the gateway's limit", []string{"create", skillFolder(t, "big", "b", "noise", randomText(t, 4096))}, 1, "larger than 2048 bytes, the gateway's limit (SWITCHBOARD_SKILL_MAX_BYTES)"},
		{"bad manifest", []string{"create", skillFolder(t, "Bad", "b")}, 1, `SKILL.md: field "name"`},
		{"too many arguments", []string{"get", "a", "b", "c"}, 2, "skill get: want 1 to 2 arguments, got 3"},
		{"missing folder", []string{"update", "deploy"}, 2, "skill update: want 2 argument(s), got 1"},
		{"unknown subcommand", []string{"publish"}, 2, `skill: unknown subcommand "publish"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runSkill(t, url, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d: %s; want %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
	if n, _ := store.Count(); n != 0 {
		t.Fatalf("%d skills stored", n)
	}
}

// randomText is n bytes that do not compress much.
func randomText(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
	}
	return b.String()[:n]
}
