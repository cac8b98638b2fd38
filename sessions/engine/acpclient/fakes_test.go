package acpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/sessions/engine/acpclient"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// fakeSandbox runs the scripted agent in this process, over pipes, as a
// sandbox would run it as a process; its home outlives the process, as a
// sandbox's workspace does. It runs no command.
type fakeSandbox struct {
	script acpagent.Script
	home   string
	// client makes the agent's HTTP calls (the egress proxy's stand-in).
	client *http.Client
	// execPanics: Exec of a command the fake does not run panics, as a
	// sandbox with a bug would, instead of failing.
	execPanics bool

	mu     sync.Mutex
	procs  []*fakeProcess
	starts int
	files  map[string][]byte // written by Exec
}

// Exec runs no command but the one that writes a file ($1) from stdin,
// as attachments are put in a sandbox.
func (f *fakeSandbox) Exec(_ context.Context, _ string, req core.ExecRequest) (*core.ExecResult, error) {
	if !req.Shell || len(req.Cmd) != 2 || !strings.Contains(req.Cmd[0], "cat >") {
		if f.execPanics {
			panic("sandbox bug")
		}
		return nil, errors.New("the fake sandbox runs no command")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[req.Cmd[1]] = req.Stdin
	return &core.ExecResult{}, nil
}

func (f *fakeSandbox) Start(ctx context.Context, sessionID string, req core.ProcessRequest) (core.Process, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &fakeProcess{stdin: inW, stdout: outR, done: make(chan struct{}), exit: -1}
	p.closeAll = func(code int) {
		p.once.Do(func() {
			p.exit = code
			inR.CloseWithError(io.EOF)
			outW.CloseWithError(io.EOF)
			close(p.done)
		})
	}
	go func() {
		_ = acpagent.Serve(context.Background(), inR, outW, acpagent.Options{Script: f.script, Home: f.home, Exit: p.closeAll, HTTPClient: f.client})
		p.closeAll(0)
	}()
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.starts++
	f.mu.Unlock()
	return p, nil
}

// hibernate ends every process, as a stopped sandbox does.
func (f *fakeSandbox) hibernate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		p.closeAll(137)
	}
}

// holds counts the holds not released.
func (f *fakeSandbox) holds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.procs {
		p.mu.Lock()
		n += p.holds
		p.mu.Unlock()
	}
	return n
}

type fakeProcess struct {
	stdin    io.WriteCloser
	stdout   io.Reader
	done     chan struct{}
	once     sync.Once
	exit     int
	closeAll func(code int)

	mu    sync.Mutex
	holds int
	kills int
}

func (p *fakeProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *fakeProcess) Stdout() io.Reader     { return p.stdout }
func (p *fakeProcess) Stderr() string        { return "scripted-acp: the last words on stderr" }
func (p *fakeProcess) Done() <-chan struct{} { return p.done }
func (p *fakeProcess) ExitCode() int         { <-p.done; return p.exit }

func (p *fakeProcess) Kill(context.Context) error {
	p.mu.Lock()
	p.kills++
	p.mu.Unlock()
	p.closeAll(137)
	return nil
}

func (p *fakeProcess) Hold() func() {
	p.mu.Lock()
	p.holds++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.holds--
			p.mu.Unlock()
		})
	}
}

// env is an ACP harness over a real store, with one session of an agent
// whose runtime is acp.
type env struct {
	t       *testing.T
	store   *bolt.Store
	sb      *fakeSandbox
	h       *acpclient.Harness
	agent   *core.Agent
	session string
	inputs  chan struct{}
	limits  core.Limits
	tools   *toolset.Registry
	attach  *harness.Attachments
}

func newEnv(t *testing.T, script acpagent.Script, mod ...func(*core.AgentRuntime)) *env {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rt := core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"scripted-acp", "--stdio"}}
	for _, m := range mod {
		m(&rt)
	}
	ctx := context.Background()
	a, err := st.CreateAgent(ctx, &core.Agent{Name: "coder", System: "You are terse.", Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: a.Version}}})
	if err != nil {
		t.Fatal(err)
	}
	sb := &fakeSandbox{script: script, home: t.TempDir()}
	h := &acpclient.Harness{Sandbox: sb, InitTimeout: time.Minute, CancelGrace: time.Minute, ParkLimit: time.Hour}
	t.Cleanup(func() { h.Close(context.Background()) })
	return &env{t: t, store: st, sb: sb, h: h, agent: a, session: res.Session.ID, inputs: make(chan struct{}, 1),
		limits: core.Limits{MaxSteps: 50, TurnSeconds: 600, MaxTokens: 1e6}}
}

// serveMCP offers the agent the session's platform tools in reg, through
// a stand-in of the egress proxy that names the session.
func (e *env) serveMCP(reg *toolset.Registry) {
	e.t.Helper()
	e.tools = reg
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host != "mcp.switchboard.internal" {
			http.Error(w, "not the gateway's host: "+r.URL.Host, http.StatusForbidden)
			return
		}
		e.h.MCP().ServeHTTP(w, r.WithContext(core.WithSandboxSession(r.Context(), e.session)))
	}))
	e.t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	e.sb.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
}

func (e *env) cycle() *harness.Cycle {
	return &harness.Cycle{SessionID: e.session, Agent: e.agent, Holder: "test", Log: e.store, Limits: e.limits, Inputs: e.inputs, Tools: e.tools, Attachments: e.attach}
}

// leftOpen logs a turn that a process which died had opened, with what it
// logged before it died.
func (e *env) leftOpen(turnID string, more ...core.Event) {
	e.t.Helper()
	evs := append([]core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}, more...)
	if _, err := e.store.Append(context.Background(), e.session, core.AppendRequest{TakeInputs: true, TurnID: turnID, Holder: "gone", Events: evs}); err != nil {
		e.t.Fatal(err)
	}
}

// send queues an input, as the API does, and tells a running cycle.
func (e *env) send(typ string, body any) {
	e.t.Helper()
	raw, _ := json.Marshal(body)
	if _, err := e.store.QueueInputs(context.Background(), e.session, core.QueueRequest{Inputs: []core.Event{core.NewInput(typ, raw)},
		AnswersPending: typ == core.TypeUserToolConfirmation}); err != nil {
		e.t.Fatal(err)
	}
	select {
	case e.inputs <- struct{}{}:
	default:
	}
}

func (e *env) say(text string) { e.send(core.TypeUserMessage, core.MessageBody{Text: text}) }

// run runs one cycle to its end.
func (e *env) run(ctx context.Context) harness.Outcome {
	e.t.Helper()
	out, err := e.h.Run(ctx, e.cycle())
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return out
}

// start runs a cycle in the background; wait returns its outcome.
func (e *env) start(ctx context.Context) (wait func() harness.Outcome) {
	done := make(chan harness.Outcome, 1)
	go func() {
		out, err := e.h.Run(ctx, e.cycle())
		if err != nil {
			e.t.Errorf("run: %v", err)
		}
		done <- out
	}()
	return func() harness.Outcome {
		e.t.Helper()
		select {
		case out := <-done:
			return out
		case <-time.After(2 * time.Minute):
			e.t.Fatal("the cycle never ended")
			return harness.Outcome{}
		}
	}
}

func (e *env) events() []core.Event {
	e.t.Helper()
	evs, err := e.store.Events(context.Background(), e.session, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) sessionNow() *core.Session {
	e.t.Helper()
	s, err := e.store.GetSession(context.Background(), e.session)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// waitFor polls the session until ok holds; the store is what a person
// sees, and the cycle runs apart.
func (e *env) waitFor(what string, ok func(*core.Session) bool) *core.Session {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s := e.sessionNow()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("never %s: session %+v", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// journal is what the scripted agent was asked, in order.
func (e *env) journal() []map[string]any {
	e.t.Helper()
	f, err := os.Open(filepath.Join(e.sb.home, ".scripted-acp", "journal.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // asked nothing yet
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// asked is the journal's entries of a method.
func (e *env) asked(method string) []map[string]any {
	var out []map[string]any
	for _, m := range e.journal() {
		if m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

// typesOf lists the events' types, with the level and kind of messages.
func typesOf(evs []core.Event) []string {
	var out []string
	for _, e := range evs {
		s := e.Type
		if e.Type == core.TypeAgentMessage {
			var b core.MessageBody
			_ = e.Decode(&b)
			s += "/" + string(e.Level)
			if b.Kind != "" {
				s += "/" + b.Kind
			}
		}
		out = append(out, s)
	}
	return out
}

func wantTypes(t *testing.T, evs []core.Event, want ...string) {
	t.Helper()
	got := typesOf(evs)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("log:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func body[T any](t *testing.T, e core.Event) T {
	t.Helper()
	var b T
	if err := e.Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func last(evs []core.Event, typ string) core.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i]
		}
	}
	return core.Event{}
}
