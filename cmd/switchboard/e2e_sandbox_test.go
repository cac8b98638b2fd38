package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// sandboxEnv points a child at the scripted model and at Docker sandboxes
// of the test image.
func sandboxEnv(t *testing.T, hsURL string) map[string]string {
	env := modelEnv(hsURL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_SANDBOX"] = "docker"
	env["SWITCHBOARD_SANDBOX_IMAGE"] = sandboximage.ForTest(t)
	env["SWITCHBOARD_SANDBOX_MEMORY_MB"] = "256"
	return env
}

// deploymentOf returns the engine client and the deployment of a data
// directory, and removes the deployment's Docker objects when the test ends.
func deploymentOf(t *testing.T, dataDir string) (*client.Client, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "deployment-id"))
	if err != nil {
		t.Fatal(err)
	}
	dep := strings.TrimSpace(string(raw))
	cli, err := sandbox.NewClient("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := sandbox.Purge(ctx, cli, dep); err != nil {
			t.Errorf("purge: %v", err)
		}
		cli.Close()
	})
	return cli, dep
}

// sandboxes lists the deployment's containers by session.
func sandboxes(t *testing.T, cli *client.Client, dep string) map[string]container.Summary {
	t.Helper()
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", sandbox.LabelDeployment+"="+dep)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]container.Summary{}
	for _, c := range res.Items {
		out[c.Labels[sandbox.LabelSession]] = c
	}
	return out
}

type toolResult struct {
	ToolUseID string `json:"tool_use_id"`
	Output    string `json:"output"`
	IsError   bool   `json:"is_error"`
}

// results maps the logged agent.tool_result events by tool_use_id, after
// checking that each follows its agent.tool_use.
func results(t *testing.T, evs []event) map[string]toolResult {
	t.Helper()
	uses := map[string]bool{}
	out := map[string]toolResult{}
	for _, e := range evs {
		switch e.Type {
		case "agent.tool_use":
			var u struct {
				ToolUseID string `json:"tool_use_id"`
			}
			mustJSON(t, e.Body, &u)
			uses[u.ToolUseID] = true
		case "agent.tool_result":
			var r toolResult
			mustJSON(t, e.Body, &r)
			if !uses[r.ToolUseID] {
				t.Fatalf("tool_result %s without its tool_use", r.ToolUseID)
			}
			out[r.ToolUseID] = r
		}
	}
	return out
}

func bashCall(id, command string) modelserver.ToolCall {
	return modelserver.ToolCall{ID: id, Name: "bash", Input: map[string]any{"command": command}}
}

// TestSandboxToolsInTheLog: the scripted model writes and reads a file with
// bash, then edits, globs, greps and reads it; every call and result is
// in the log.
func TestSandboxToolsInTheLog(t *testing.T) {
	ms, hs := modelserver.Start(t)
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, sandboxEnv(t, hs.URL))
	deploymentOf(t, dataDir)
	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_bash", "mkdir -p notes && printf 'hello\\nworld\\n' > notes/a.txt && cat notes/a.txt")}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_edit", Name: "edit", Input: map[string]any{"path": "notes/a.txt", "old_string": "world", "new_string": "sandbox"}}}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{
			{ID: "toolu_glob", Name: "glob", Input: map[string]any{"pattern": "**/*.txt"}},
			{ID: "toolu_grep", Name: "grep", Input: map[string]any{"pattern": "sand", "path": "notes"}},
			{ID: "toolu_read", Name: "read", Input: map[string]any{"path": "/workspace/notes/a.txt"}},
		}},
		modelserver.Step{Text: "All done."},
	)
	id := srv.createSession("make notes")
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
	want := map[string]string{
		"toolu_bash": "hello\nworld\n",
		"toolu_edit": "edited /workspace/notes/a.txt at line 2",
		"toolu_glob": "/workspace/notes/a.txt\n",
		"toolu_grep": "/workspace/notes/a.txt:2:sandbox\n",
		"toolu_read": "     1\thello\n     2\tsandbox\n",
	}
	got := results(t, evs)
	for tid, w := range want {
		if r := got[tid]; r.IsError || r.Output != w {
			t.Errorf("%s: %+v, want output %q", tid, r, w)
		}
	}
	reqs := ms.Requests()
	for _, name := range hands.Names() {
		if !slices.Contains(reqs[0].Tools, name) {
			t.Errorf("the model was not offered %s: %v", name, reqs[0].Tools)
		}
	}
	if strings.Contains(reqs[0].System, "without a code sandbox") {
		t.Errorf("the model was told it has no sandbox: %q", reqs[0].System)
	}
}

// TestSandboxNone: without a sandbox (switched off, or by default when no
// engine answers) the gateway works, the hands tools are absent and the
// model is told so. No Docker needed.
func TestSandboxNone(t *testing.T) {
	for name, extra := range map[string]map[string]string{
		"SWITCHBOARD_SANDBOX=none": {"SWITCHBOARD_SANDBOX": "none"},
		"no engine answers":        {"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
	} {
		t.Run(name, func(t *testing.T) {
			ms, hs := modelserver.Start(t)
			env := modelEnv(hs.URL, modelserver.FormatAnthropic)
			maps.Copy(env, extra)
			srv := startServer(t, t.TempDir(), env)
			ms.Push(modelserver.Step{Text: "I cannot run code here."})
			srv.waitIdle(srv.createSession("run ls"))
			req := ms.Requests()[0]
			for _, name := range hands.Names() {
				if slices.Contains(req.Tools, name) {
					t.Errorf("the model was offered %s without a sandbox", name)
				}
			}
			if !strings.Contains(req.System, "without a code sandbox") || !strings.Contains(req.System, "bash") {
				t.Errorf("the system prompt does not say there is no sandbox: %q", req.System)
			}
		})
	}
}

// TestSandboxMisconfiguration: each bad sandbox setting stops serve at once
// with one line naming the variable.
func TestSandboxMisconfiguration(t *testing.T) {
	tests := []struct {
		name, value string
		extra       []string
		needsDocker bool
	}{
		{"SWITCHBOARD_SANDBOX", "podman", nil, false},
		{"SWITCHBOARD_SANDBOX_IDLE_SECONDS", "0", nil, false},
		{"SWITCHBOARD_SANDBOX_MEMORY_MB", "lots", nil, false},
		{"SWITCHBOARD_SANDBOX_PIDS", "3", nil, false},
		{"SWITCHBOARD_SANDBOX_CPUS", "0", nil, false},
		{"SWITCHBOARD_SANDBOX_COMMAND_SECONDS", "-1", nil, false},
		// docker asked for, and no engine answers.
		{"SWITCHBOARD_SANDBOX", "docker", []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, false},
		// docker asked for, and the engine lacks the image.
		{"SWITCHBOARD_SANDBOX_IMAGE", "switchboard-no-such-image:1", []string{"SWITCHBOARD_SANDBOX=docker"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			if tt.needsDocker {
				sandboximage.ForTest(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			cmd := exec.CommandContext(ctx, serveBinary(t), "serve")
			cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+t.TempDir(), "SWITCHBOARD_ADDR="+anyPort, tt.name+"="+tt.value)
			cmd.Env = append(cmd.Env, tt.extra...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve accepted %s=%s:\n%s", tt.name, tt.value, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.name) {
				t.Fatalf("want one line naming %s, got:\n%s", tt.name, out)
			}
		})
	}
}

// TestSandboxHoldsNoSecret: the model key, platform secrets, the admin
// token, the master key and a vault value are nowhere in the sandbox: not
// in env, /proc/*/environ or its filesystem; nor in the log or the
// gateway's output.
func TestSandboxHoldsNoSecret(t *testing.T) {
	ms, hs := modelserver.Start(t)
	dataDir := t.TempDir()
	env := sandboxEnv(t, hs.URL)
	planted := map[string]string{
		"ANTHROPIC_API_KEY":     "sk-ant-planted-" + randomToken(t),
		"OPENAI_API_KEY":        "sk-openai-planted-" + randomToken(t),
		"SLACK_SIGNING_SECRET":  "slack-planted-" + randomToken(t),
		"SLACK_CLIENT_SECRET":   "slack-client-planted-" + randomToken(t),
		"GITHUB_WEBHOOK_SECRET": "github-planted-" + randomToken(t),
		"LINEAR_WEBHOOK_SECRET": "linear-planted-" + randomToken(t),
		"LINEAR_CLIENT_SECRET":  "linear-client-planted-" + randomToken(t),
	}
	for k, v := range planted {
		env[k] = v
	}
	// Slack (OAuth mode), GitHub and Linear are enabled only so that their
	// secrets are loaded.
	env["SLACK_CLIENT_ID"] = "1234.5678"
	env["LINEAR_CLIENT_ID"] = "linear-client-id"
	gh := fakegithub.Start(t)
	env["GITHUB_APP_ID"] = strconv.FormatInt(gh.AppID, 10)
	env["GITHUB_APP_PRIVATE_KEY"] = string(gh.KeyPEM)
	env["GITHUB_APP_SLUG"] = gh.Slug
	env["GITHUB_API_URL"] = gh.APIURL()
	ms.APIKey = planted["ANTHROPIC_API_KEY"]
	srv := startServer(t, dataDir, env)
	cli, dep := deploymentOf(t, dataDir)
	planted["SWITCHBOARD_ADMIN_TOKEN"] = adminToken
	planted["SWITCHBOARD_MASTER_KEY"] = strings.TrimSpace(readFile(t, filepath.Join(dataDir, "master.key")))

	vaultValue := "vault-planted-" + randomToken(t)
	code, raw := srv.do("POST", "/v1/vaults", map[string]any{"name": "secrets"})
	if code != 201 {
		t.Fatalf("create vault: %d %s", code, raw)
	}
	var vault struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &vault)
	code, raw = srv.do("POST", "/v1/vaults/"+vault.ID+"/credentials", map[string]any{"name": "api", "kind": "static_bearer", "hosts": []string{"api.example.com"}, "token": vaultValue})
	if code != 201 {
		t.Fatalf("create credential: %d %s", code, raw)
	}
	planted["vault"] = vaultValue

	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_env", `env; for f in /proc/[0-9]*/environ; do echo "== $f"; tr '\0' '\n' < "$f" 2>&1; done; echo "== files"; ls -la ~ /workspace /tmp`)}},
		modelserver.Step{Text: "Looked."},
	)
	id := srv.createSession("look around")
	_, evs := srv.waitIdle(id)
	out := results(t, evs)["toolu_env"]
	if out.IsError || !strings.Contains(out.Output, "HOME=/home/agent") || !strings.Contains(out.Output, "/environ") {
		t.Fatalf("the environment dump failed: %+v", out)
	}
	var log bytes.Buffer
	for _, e := range evs {
		log.Write(e.Body)
	}
	box, ok := sandboxes(t, cli, dep)[id]
	if !ok {
		t.Fatal("no sandbox for the session")
	}
	info, err := cli.ContainerInspect(context.Background(), box.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every file of the sandbox, searched from inside for the values given
	// on stdin, so that they are written nowhere in it. A canary file shows
	// that the search finds what is there.
	canary := "canary-" + randomToken(t)
	execIn(t, cli, box.ID, []byte(canary), "sh", "-c", "cat > /workspace/.canary")
	patterns := bytes.NewBufferString(canary + "\n")
	for _, v := range planted {
		patterns.WriteString(v + "\n")
	}
	found := execIn(t, cli, box.ID, patterns.Bytes(), "grep", "-rlsF", "-f", "-", "/", "--exclude-dir=proc", "--exclude-dir=sys", "--exclude-dir=dev")
	for name, v := range planted {
		for where, text := range map[string]string{
			"the environment dump": out.Output,
			"the container's env":  strings.Join(info.Container.Config.Env, "\n"),
			"the log":              log.String(),
			"the gateway's output": srv.out.String(),
		} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds %s", where, name)
			}
		}
	}
	if strings.TrimSpace(found) != "/workspace/.canary" {
		t.Errorf("files in the sandbox holding a planted value (only the canary expected): %q", found)
	}
}

// execIn runs cmd as the sandbox user in a container, stdin given, and
// returns its stdout.
func execIn(t *testing.T, cli *client.Client, id string, stdin []byte, cmd ...string) string {
	t.Helper()
	ctx := context.Background()
	ex, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{User: "1000:1000", AttachStdin: true, AttachStdout: true, AttachStderr: true, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	go func() { _, _ = att.Conn.Write(stdin); _ = att.CloseWrite() }()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, att.Reader); err != nil {
		t.Fatal(err)
	}
	return stdout.String()
}

// TestSandboxLifecycle: the container hibernates after the idle timeout
// with its files intact and wakes at the next call; archiving removes it;
// after a SIGKILL the restarted gateway finds the same running container,
// and removes those whose session is gone.
func TestSandboxLifecycle(t *testing.T) {
	ms, hs := modelserver.Start(t)
	dataDir := t.TempDir()
	env := sandboxEnv(t, hs.URL)
	env["SWITCHBOARD_SANDBOX_IDLE_SECONDS"] = "1"
	srv := startServer(t, dataDir, env)
	cli, dep := deploymentOf(t, dataDir)
	ctx := context.Background()

	ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_1", "echo kept > keep.txt")}}, modelserver.Step{Text: "saved"})
	a := srv.createSession("save a file")
	srv.waitIdle(a)
	first := sandboxes(t, cli, dep)[a]
	if first.ID == "" {
		t.Fatal("no sandbox after the first hands call")
	}
	waitState(t, cli, first.ID, false)

	ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_2", "cat keep.txt")}}, modelserver.Step{Text: "read"})
	srv.do("POST", "/v1/sessions/"+a+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "read it back"}}})
	_, evs := srv.waitFor(a, "the second turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	if r := results(t, evs)["toolu_2"]; r.IsError || r.Output != "kept\n" {
		t.Fatalf("after hibernation: %+v", r)
	}
	if again := sandboxes(t, cli, dep)[a]; again.ID != first.ID {
		t.Fatalf("woke container %s, want %s", again.ID, first.ID)
	}

	// Archiving removes the sandbox and its workspace.
	ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_3", "true")}}, modelserver.Step{Text: "ok"})
	b := srv.createSession("use the sandbox")
	srv.waitIdle(b)
	if code, raw := srv.do("POST", "/v1/sessions/"+b+"/archive", nil); code != 200 {
		t.Fatalf("archive: %d %s", code, raw)
	}
	// The archive's commit releases the sandbox, after the answer.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok := sandboxes(t, cli, dep)[b]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the archived session's sandbox is still there")
		}
	}

	// A warm sandbox, then SIGKILL; meanwhile a sandbox of a session the
	// store does not know appears (as after a lost database).
	srv.kill()
	env["SWITCHBOARD_SANDBOX_IDLE_SECONDS"] = "300"
	srv = srv.restart()
	ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_4", "cat keep.txt")}}, modelserver.Step{Text: "warm"})
	srv.do("POST", "/v1/sessions/"+a+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "warm up"}}})
	srv.waitFor(a, "the third turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 3
	})
	warm := inspect(t, cli, first.ID)
	if !warm.State.Running {
		t.Fatal("the sandbox is not running before the kill")
	}
	srv.kill()
	orphan := startOrphan(t, cli, dep, env["SWITCHBOARD_SANDBOX_IMAGE"])

	srv = srv.restart()
	if _, err := cli.ContainerInspect(ctx, orphan, client.ContainerInspectOptions{}); err == nil {
		t.Fatal("the sandbox of a session that is gone survived the restart")
	}
	ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_5", "cat keep.txt")}}, modelserver.Step{Text: "still there"})
	srv.do("POST", "/v1/sessions/"+a+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "after the crash"}}})
	_, evs = srv.waitFor(a, "the fourth turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 4
	})
	if r := results(t, evs)["toolu_5"]; r.IsError || r.Output != "kept\n" {
		t.Fatalf("after the restart: %+v", r)
	}
	after := inspect(t, cli, first.ID)
	if !after.State.Running || after.State.StartedAt != warm.State.StartedAt {
		t.Fatalf("the restarted gateway did not keep the running sandbox: started %s, then %s", warm.State.StartedAt, after.State.StartedAt)
	}
	if got := sandboxes(t, cli, dep); len(got) != 1 {
		t.Fatalf("sandboxes after the restart: %v", got)
	}
}

func inspect(t *testing.T, cli *client.Client, id string) container.InspectResponse {
	t.Helper()
	res, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Container
}

// waitState waits until the container runs (or stops).
func waitState(t *testing.T, cli *client.Client, id string, running bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for inspect(t, cli, id).State.Running != running {
		if time.Now().After(deadline) {
			t.Fatalf("container %s: want running=%v", id, running)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startOrphan starts a container labelled as a sandbox of the deployment
// for a session that does not exist.
func startOrphan(t *testing.T, cli *client.Client, dep, image string) string {
	t.Helper()
	ctx := context.Background()
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Image: image,
		Name:  "switchboard-" + dep + "-ses_gone" + randomToken(t)[:8],
		Config: &container.Config{
			Cmd:    []string{"sleep", "infinity"},
			Labels: map[string]string{sandbox.LabelDeployment: dep, sandbox.LabelSession: "ses_gone", sandbox.LabelRole: "sandbox"},
		},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func randomToken(t *testing.T) string {
	t.Helper()
	return strings.ToLower(rand.Text())
}
