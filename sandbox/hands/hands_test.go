package hands

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// fakeSandbox answers Exec with canned results, in order, and records the
// requests.
type fakeSandbox struct {
	results []*core.ExecResult
	err     error
	reqs    []core.ExecRequest
}

func (f *fakeSandbox) Exec(_ context.Context, _ string, req core.ExecRequest) (*core.ExecResult, error) {
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	if len(f.results) == 0 {
		return nil, errors.New("fake: no result left")
	}
	r := f.results[0]
	f.results = f.results[1:]
	return r, nil
}

func byName(t *testing.T, sb core.Sandbox, name string) core.Tool {
	t.Helper()
	for _, tool := range Tools(sb, Options{}) {
		if tool.Def().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, tool core.Tool, input any) core.ToolResult {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Call(context.Background(), core.ToolCall{SessionID: "ses_x", ID: "toolu_1", Name: tool.Def().Name, Input: raw})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDefs(t *testing.T) {
	tools := Tools(&fakeSandbox{}, Options{})
	if len(tools) != len(Names()) {
		t.Fatalf("%d tools, %d names", len(tools), len(Names()))
	}
	for i, tool := range tools {
		d := tool.Def()
		if d.Name != Names()[i] || core.ValidToolName(d.Name) != nil || d.Description == "" {
			t.Errorf("tool %d: %+v", i, d)
		}
		var s map[string]any
		if err := json.Unmarshal(d.InputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s schema %s: %v", d.Name, d.InputSchema, err)
		}
	}
}

func TestBashResults(t *testing.T) {
	cases := []struct {
		name    string
		res     *core.ExecResult
		err     error
		want    []string
		isError bool
	}{
		{"ok", &core.ExecResult{Stdout: []byte("hi\n")}, nil, []string{"hi\n"}, false},
		{"no output", &core.ExecResult{}, nil, []string{"(no output)"}, false},
		{"exit code and stderr", &core.ExecResult{ExitCode: 2, Stdout: []byte("out"), Stderr: []byte("bad\n")}, nil, []string{"out\n[stderr]\nbad\n[exit code 2]"}, true},
		{"killed", &core.ExecResult{ExitCode: -1, Killed: "timed out after 1s"}, nil, []string{"[killed: timed out after 1s]"}, true},
		{"invalid utf-8", &core.ExecResult{Stdout: []byte{'a', 0xff, 'b'}}, nil, []string{"a\uFFFDb"}, false},
		{"limit", &core.ExecResult{Stderr: []byte("fork: retry\n"), Limit: "the process limit (9) was reached"}, nil, []string{"[stderr]\nfork: retry\n[limit: the process limit (9) was reached]"}, true},
		{"sandbox down", nil, core.ErrSandboxUnavailable, []string{"could not run", "sandbox unavailable"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := &fakeSandbox{err: c.err}
			if c.res != nil {
				sb.results = []*core.ExecResult{c.res}
			}
			res := call(t, byName(t, sb, "bash"), map[string]any{"command": "true", "timeout_seconds": 99999})
			for _, w := range c.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output %q lacks %q", res.Output, w)
				}
			}
			if res.IsError != c.isError {
				t.Errorf("is_error %v", res.IsError)
			}
			if len(sb.reqs) == 1 && (!sb.reqs[0].Shell || sb.reqs[0].Timeout != 10*time.Minute) {
				t.Errorf("request %+v: want a shell script capped at the max timeout", sb.reqs[0])
			}
		})
	}
}

func TestEditMatches(t *testing.T) {
	cases := []struct {
		name, content, old, want string
		isError                  bool
	}{
		{"one", "a\nfoo\nb\n", "foo", "edited /workspace/f.txt at line 2", false},
		{"none", "a\nb\n", "foo", "was not found", true},
		{"two", "foo foo", "foo", "occurs 2 times", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := &fakeSandbox{results: []*core.ExecResult{{Stdout: []byte(c.content)}, {}}}
			res := call(t, byName(t, sb, "edit"), map[string]any{"path": "f.txt", "old_string": c.old, "new_string": "bar"})
			if res.IsError != c.isError || !strings.Contains(res.Output, c.want) {
				t.Fatalf("result %+v", res)
			}
			if c.isError {
				if len(sb.reqs) != 1 {
					t.Fatalf("a failed edit wrote the file: %d execs", len(sb.reqs))
				}
				return
			}
			if got := string(sb.reqs[1].Stdin); got != strings.Replace(c.content, c.old, "bar", 1) {
				t.Fatalf("wrote %q", got)
			}
		})
	}
}

func TestReadFormats(t *testing.T) {
	cases := []struct {
		name, stdout, want string
		isError            bool
	}{
		{"text", "8 0 2\nab\ncd\n", "     1\tab\n     2\tcd\n", false},
		{"more", "8 0 4\nab\ncd\n", "pass offset 3", false},
		{"binary", "100 3 0\n", "binary file", true},
		{"empty", "0 0 0\n", "(empty file)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := &fakeSandbox{results: []*core.ExecResult{{Stdout: []byte(c.stdout)}}}
			res := call(t, byName(t, sb, "read"), map[string]any{"path": "/tmp/x"})
			if res.IsError != c.isError || !strings.Contains(res.Output, c.want) {
				t.Fatalf("result %+v", res)
			}
		})
	}
}
