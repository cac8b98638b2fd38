package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
)

// cli runs `switchboard agent …` or `switchboard session …` as the
// binary does, and returns the exit code.
func cli(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	d := Defaults{URL: "http://127.0.0.1:8080", DataDir: "./switchboard-data"}
	c, ok := command.Find([]command.Command{Agent(d), Session(d), Memory(d), Destination(d), Installation(d), Environment(d), Vault(d), Credential(d)}, args[0])
	if !ok {
		panic("no command " + args[0])
	}
	return c.Run(context.Background(), command.Env{Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr}, args[1:])
}

func TestReorder(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("json", false, "")
	fs.Bool("follow", false, "")
	fs.String("level", "", "")
	cases := []struct{ in, want string }{
		{"ID --follow --level user", "--follow --level user -- ID"},
		{"--json ID TEXT", "--json -- ID TEXT"},
		{"ID -level=user -", "-level=user -- ID -"},
		{"ID -- --json", "-- ID --json"},
		{"--unknown ID", "--unknown -- ID"},
	}
	for _, c := range cases {
		if got := strings.Join(reorder(fs, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("reorder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatEvent(t *testing.T) {
	ev := func(seq uint64, typ, body string) core.Event {
		return core.Event{Seq: seq, Type: typ, Body: json.RawMessage(body)}
	}
	cases := []struct {
		e    core.Event
		want string
	}{
		{ev(12, "agent.message", `{"text":"Hello\nthere"}`), "#12 agent.message           Hello\n                            there\n"},
		{ev(3, "turn.started", `{}`), "#3 turn.started\n"},
		{ev(6, "session.status_changed", `{"status":"idle","stop_reason":"completed"}`), "#6 session.status_changed  idle (completed)\n"},
		{ev(5, "turn.completed", `{"yield_reason":"completed","usage":{"input_tokens":2,"output_tokens":3}}`), "#5 turn.completed          completed  tokens in=2 out=3\n"},
		{ev(7, "agent.tool_use", `{"tool_use_id":"tu_1","name":"say","input":{"text":"hi"}}`), "#7 agent.tool_use          say tu_1 {\"text\":\"hi\"}\n"},
		{ev(8, "agent.tool_result", `{"tool_use_id":"tu_1","output":"boom","is_error":true}`), "#8 agent.tool_result       tu_1 error: boom\n"},
		{ev(9, "session.error", `{"message":"rate limited","retryable":true}`), "#9 session.error           rate limited (retryable)\n"},
		{ev(10, "future.type", `{"x":1}`), "#10 future.type             {\"x\":1}\n"},
	}
	for _, c := range cases {
		if got := formatEvent(c.e); got != c.want {
			t.Errorf("formatEvent(%s)\n got %q\nwant %q", c.e.Type, got, c.want)
		}
	}
	long := formatEvent(ev(1, "agent.tool_result", `{"tool_use_id":"t","output":"`+strings.Repeat("x", 500)+`"}`))
	if !strings.HasSuffix(long, "…\n") || len(long) > 300 {
		t.Errorf("tool output not clipped: %d bytes", len(long))
	}
}

func TestTokenResolution(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The gateway's default data directory is read only when
	// SWITCHBOARD_DATA_DIR is not set.
	defaultDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(defaultDir, "admin-token"), []byte("from-default-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"from-flag", map[string]string{"SWITCHBOARD_TOKEN": "from-env", "SWITCHBOARD_DATA_DIR": dir}, "from-flag"},
		{"", map[string]string{"SWITCHBOARD_TOKEN": "from-env", "SWITCHBOARD_DATA_DIR": dir}, "from-env"},
		{"", map[string]string{"SWITCHBOARD_ADMIN_TOKEN": "from-admin", "SWITCHBOARD_DATA_DIR": dir}, "from-admin"},
		{"", map[string]string{"SWITCHBOARD_DATA_DIR": dir}, "from-file"},
		{"", map[string]string{}, "from-default-file"},
	}
	for _, c := range cases {
		cmd := newSubcommand(cliIO{getenv: func(k string) string { return c.env[k] }, defaults: Defaults{DataDir: defaultDir}}, "session status", "status ID")
		cmd.token = c.flag
		if got, err := cmd.resolveToken(); err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v", c, got, err)
		}
	}
	cmd := newSubcommand(cliIO{getenv: func(k string) string { return map[string]string{"SWITCHBOARD_DATA_DIR": t.TempDir()}[k] }}, "session status", "status ID")
	if _, err := cmd.resolveToken(); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("missing token file: %v", err)
	}
}

// TestAgentUpdateMergesLimits: limits are one field to the API, so limit
// flags, however many, must keep the limits not given, pinned to the
// version they were read from.
func TestAgentUpdateMergesLimits(t *testing.T) {
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"id":"agt_1","name":"a","version":4,"model":"anthropic/m","system":"","limits":{"max_steps":5,"turn_seconds":60,"max_session_tokens":1000,"max_turns":4}}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posted = append(posted, string(b))
		mu.Unlock()
		io.WriteString(w, `{"id":"agt_1","name":"a","version":5,"model":"anthropic/m","system":"","limits":{"max_steps":5,"turn_seconds":60,"max_tokens":9}}`)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	env := func(string) string { return "" }
	code := cli([]string{"agent", "update", "agt_1", "--max-tokens", "9", "--url", srv.URL, "--token", "t", "--json"}, env, strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	code = cli([]string{"agent", "update", "agt_1", "--max-steps", "1", "--turn-seconds", "2", "--max-tokens", "3", "--version", "7", "--url", srv.URL, "--token", "t"}, env, strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	code = cli([]string{"agent", "update", "agt_1", "--max-steps", "1", "--turn-seconds", "2", "--max-tokens", "3", "--max-session-tokens", "5", "--max-session-cost-usd", "6", "--max-turns", "7", "--url", srv.URL, "--token", "t"}, env, strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := []string{
		`{"limits":{"max_steps":5,"turn_seconds":60,"max_tokens":9,"max_session_tokens":1000,"max_turns":4},"version":4}`,
		`{"limits":{"max_steps":1,"turn_seconds":2,"max_tokens":3,"max_session_tokens":1000,"max_turns":4},"version":7}`,
		`{"limits":{"max_steps":1,"turn_seconds":2,"max_tokens":3,"max_session_tokens":5,"max_session_cost_usd":6,"max_turns":7},"version":4}`,
	}
	if strings.Join(posted, "\n") != strings.Join(want, "\n") {
		t.Fatalf("posted\n%s\nwant\n%s", strings.Join(posted, "\n"), strings.Join(want, "\n"))
	}
	code = cli([]string{"agent", "update", "agt_1", "--url", srv.URL, "--token", "t"}, env, strings.NewReader(""), &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "nothing to change") {
		t.Fatalf("empty update: exit %d, %s", code, errOut.String())
	}
}

func TestAgentFile(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"id":"agt_1","name":"n","version":1,"model":"openai/m","system":"s","limits":{}}`)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	body := `{"name":"from-file","model":"openai/m","system":"s","tools":[{"type":"custom","name":"lookup"}],"limits":{"max_steps":3}}`
	code := cli([]string{"agent", "create", "--file", "-", "--name", "n", "--max-tokens", "7", "--url", srv.URL, "--token", "t"}, func(string) string { return "" }, strings.NewReader(body), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := `{"name":"n","model":"openai/m","system":"s","tools":[{"type":"custom","name":"lookup"}],"limits":{"max_steps":3,"max_tokens":7}}`
	if got != want {
		t.Fatalf("posted %s\nwant   %s", got, want)
	}
	code = cli([]string{"agent", "create", "--file", "-", "--url", srv.URL, "--token", "t"}, func(string) string { return "" }, strings.NewReader(`{"nmae":"x"}`), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), `unknown field "nmae"`) {
		t.Fatalf("typo in file: exit %d, %s", code, errOut.String())
	}
}
