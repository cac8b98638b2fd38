package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

func TestMemoryCommands(t *testing.T) {
	stores := &fakememory.Stores{}
	mux := http.NewServeMux()
	(&memory.Handler{Stores: stores}).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer t" {
			r = r.WithContext(core.WithPrincipal(r.Context(), core.Principal{Admin: true}))
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli(append(append([]string{"memory"}, args...), "--url", srv.URL, "--token", "t"), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, errOut := run("create", "notes", "--description", "what we learned")
	if code != 0 || !strings.Contains(out, "name:") || !strings.Contains(out, "notes") || !strings.Contains(out, "shared:      false") || !strings.Contains(out, "max_versions=100") {
		t.Fatalf("create: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = run("create", "team", "--shared"); code != 0 || !strings.Contains(out, "shared:      true") {
		t.Fatalf("create --shared: exit %d\n%s%s", code, out, errOut)
	}
	m, err := stores.GetMemoryStore(t.Context(), "notes")
	if err != nil || m.Description != "what we learned" {
		t.Fatalf("stored %+v, %v", m, err)
	}
	for _, content := range []string{"first\n", "second\n"} {
		if _, err := stores.ChangeMemory(t.Context(), core.MemoryChange{Store: m.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "people/alice.md", Content: content, SessionID: "ses_1", TurnID: "trn_1"}); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout, or stderr when code != 0
	}{
		{"stores", []string{"stores"}, 0, []string{"NAME", "notes", "what we learned", "team", "true"}},
		{"ls", []string{"ls", "notes", "--tenant", "slack:T1"}, 0, []string{"PATH", "people/alice.md", "7", "2"}},
		{"ls without a tenant", []string{"ls", "notes"}, 1, []string{`tenant is required: memory store "notes" is not shared`}},
		{"ls of a shared store", []string{"ls", "team"}, 0, []string{"PATH"}},
		{"cat", []string{"cat", "notes", "people/alice.md", "--tenant", "slack:T1"}, 0, []string{"second\n"}},
		{"cat a version", []string{"cat", "notes", "people/alice.md", "--tenant", "slack:T1", "--version", "1"}, 0, []string{"first\n"}},
		{"cat of no file", []string{"cat", "notes", "nope.md", "--tenant", "slack:T1"}, 1, []string{`memory file "nope.md" not found`}},
		{"log", []string{"log", "notes", "people/alice.md", "--tenant", "slack:T1"}, 0, []string{"VERSION", "ses_1", "trn_1", "write"}},
		{"revert", []string{"revert", "notes", "people/alice.md", "1", "--tenant", "slack:T1"}, 0, []string{"people/alice.md: version 3 has the content of version 1"}},
		{"revert to a bad version", []string{"revert", "notes", "people/alice.md", "x"}, 2, []string{`VERSION "x"`}},
		{"a missing argument", []string{"cat", "notes"}, 2, []string{"want 2 argument(s), got 1"}},
		{"an unknown subcommand", []string{"rm"}, 2, []string{`unknown subcommand "rm"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(tt.args...)
			got := out
			if tt.code != 0 {
				got = errOut
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
	v, err := stores.MemoryFile(t.Context(), m.ID, "slack:T1", "people/alice.md", 0)
	if err != nil || v.Content != "first\n" || v.By != "admin" {
		t.Fatalf("after revert: %+v, %v", v, err)
	}
}
