package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
)

// editorClient is an ACP client of the tests' own, an editor in all but
// its screen: it launches 'switchboard acp', records what the agent sends
// and answers permission requests as the test says.
type editorClient struct {
	t      *testing.T
	conn   *acp.ClientSideConnection
	cmd    *exec.Cmd
	stdout *syncBuffer // every byte the agent wrote on stdout
	stderr *syncBuffer
	exited chan struct{}

	mu      sync.Mutex
	updates []acp.SessionNotification
	changed chan struct{} // closed at the next update
	// asks receives the agent's permission requests; the test answers
	// each on its reply channel.
	asks chan permissionAsk
}

type permissionAsk struct {
	req   acp.RequestPermissionRequest
	reply chan acp.RequestPermissionResponse
}

// startEditor launches 'switchboard acp' with args and initializes the
// connection.
func startEditor(t *testing.T, args ...string) *editorClient {
	t.Helper()
	c := &editorClient{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{}), changed: make(chan struct{}), asks: make(chan permissionAsk, 8)}
	c.cmd = exec.Command(serveBinary(t), append([]string{"acp"}, args...)...)
	c.cmd.Env = childEnviron()
	c.cmd.Stderr = c.stderr
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	c.conn = acp.NewClientSideConnection(c, stdin, io.TeeReader(stdout, c.stdout))
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(patience):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			t.Logf("switchboard acp stderr:\n%s", c.stderr.String())
		}
		onlyFrames(t, c.stdout.String())
	})
	init, err := c.conn.Initialize(c.ctx(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber, ClientInfo: &acp.Implementation{Name: "test-editor", Version: "1"}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	caps := init.AgentCapabilities
	if !caps.LoadSession || caps.SessionCapabilities.List == nil || caps.PromptCapabilities.Image {
		t.Fatalf("capabilities %+v", caps)
	}
	return c
}

func (c *editorClient) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	c.t.Cleanup(cancel)
	return ctx
}

// prompt sends text and returns the stop reason or the error.
func (c *editorClient) prompt(id acp.SessionId, text string) (acp.StopReason, error) {
	resp, err := c.conn.Prompt(c.ctx(), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	return resp.StopReason, err
}

// promptAsync runs prompt in the background.
func (c *editorClient) promptAsync(id acp.SessionId, text string) <-chan promptResult {
	out := make(chan promptResult, 1)
	go func() {
		stop, err := c.prompt(id, text)
		out <- promptResult{stop, err}
	}()
	return out
}

type promptResult struct {
	stop acp.StopReason
	err  error
}

// waitPrompt waits for a prompt run by promptAsync.
func (c *editorClient) waitPrompt(ch <-chan promptResult) promptResult {
	c.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(patience):
		c.t.Fatalf("the prompt did not end; stderr:\n%s", c.stderr.String())
	}
	return promptResult{}
}

// text is everything of the kind the agent sent for the session
// ("agent", "user", "thought").
func (c *editorClient) text(kind string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.updates {
		u := n.Update
		var cb *acp.ContentBlock
		switch {
		case kind == "agent" && u.AgentMessageChunk != nil:
			cb = &u.AgentMessageChunk.Content
		case kind == "user" && u.UserMessageChunk != nil:
			cb = &u.UserMessageChunk.Content
		case kind == "thought" && u.AgentThoughtChunk != nil:
			cb = &u.AgentThoughtChunk.Content
		case kind == "tool" && u.ToolCallUpdate != nil:
			for _, tc := range u.ToolCallUpdate.Content {
				if tc.Content != nil && tc.Content.Content.Text != nil {
					b.WriteString(string(u.ToolCallUpdate.ToolCallId) + ": " + tc.Content.Content.Text.Text + "\n")
				}
			}
		}
		if cb != nil && cb.Text != nil {
			b.WriteString(cb.Text.Text)
		}
	}
	return b.String()
}

// toolCalls lists the ids of the tool_call updates, and of the
// tool_call_update ones that completed.
func (c *editorClient) toolCalls() (started, completed []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.updates {
		if tc := n.Update.ToolCall; tc != nil {
			started = append(started, string(tc.ToolCallId))
		}
		if tu := n.Update.ToolCallUpdate; tu != nil && tu.Status != nil && (*tu.Status == acp.ToolCallStatusCompleted || *tu.Status == acp.ToolCallStatusFailed) {
			completed = append(completed, string(tu.ToolCallId))
		}
	}
	return started, completed
}

// waitText waits until the agent's text of kind holds sub.
func (c *editorClient) waitText(kind, sub string) {
	c.t.Helper()
	deadline := time.After(patience)
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if strings.Contains(c.text(kind), sub) {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no %s text %q in %q; stderr:\n%s", kind, sub, c.text(kind), c.stderr.String())
		}
	}
}

// ask waits for the agent's next permission request.
func (c *editorClient) ask() permissionAsk {
	c.t.Helper()
	select {
	case a := <-c.asks:
		return a
	case <-time.After(patience):
		c.t.Fatalf("no permission request; stderr:\n%s", c.stderr.String())
	}
	return permissionAsk{}
}

// answer picks the option of the kind.
func (a permissionAsk) answer(kind acp.PermissionOptionKind) {
	for _, o := range a.req.Options {
		if o.Kind == kind {
			a.reply <- acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(o.OptionId)}
			return
		}
	}
	panic("no option " + string(kind))
}

// The acp.Client side.

func (c *editorClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *editorClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	reply := make(chan acp.RequestPermissionResponse, 1)
	c.asks <- permissionAsk{req: p, reply: reply}
	select {
	case r := <-reply:
		return r, nil
	case <-ctx.Done():
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
}

func (c *editorClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *editorClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *editorClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *editorClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *editorClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *editorClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *editorClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// onlyFrames checks that out, all the agent wrote on stdout, is JSON-RPC
// 2.0 frames, one a line, and nothing else.
func onlyFrames(t *testing.T, out string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		var f struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &f); err != nil || f.JSONRPC != "2.0" || (f.Method == "" && f.ID == nil) {
			t.Fatalf("stdout line %d is not a JSON-RPC frame: %q", n, line)
		}
	}
}

// rpcMessage is the message of a JSON-RPC error.
func rpcMessage(t *testing.T, err error) string {
	t.Helper()
	re, ok := err.(*acp.RequestError)
	if !ok {
		t.Fatalf("want a JSON-RPC error, got %T %v", err, err)
	}
	return re.Message
}
