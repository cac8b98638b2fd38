package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// TestVersion: switchboard version prints the version and commit stamped
// at build time, and says so when none was.
func TestVersion(t *testing.T) {
	print := func() string {
		var out bytes.Buffer
		if code := run(context.Background(), []string{"version"}, command.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &out}); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	if got := print(); !strings.HasPrefix(got, "switchboard ") || !strings.Contains(got, "(") {
		t.Fatalf("version printed %q", got)
	}
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.4.0", "0123456789abcdef0123456789abcdef01234567"
	if got := print(); got != "switchboard v1.4.0 (0123456789abcdef0123456789abcdef01234567)" {
		t.Fatalf("a stamped build printed %q", got)
	}
}

// TestVersionJSON: version --json prints the version and commit as an
// object.
func TestVersionJSON(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.4.0", "0123456789abcdef"
	code, out, errOut := runHelp("version", "--json")
	if code != 0 || out != `{"commit":"0123456789abcdef","version":"v1.4.0"}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
