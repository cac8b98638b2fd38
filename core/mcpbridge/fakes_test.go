package mcpbridge_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
)

// fakeCreds is a CredentialSource holding one bearer token; Refresh moves
// to next, or fails when there is none.
type fakeCreds struct {
	mu        sync.Mutex
	token     string
	next      string
	refreshes int
	hosts     []string
}

var _ core.CredentialSource = (*fakeCreds)(nil)

func (f *fakeCreds) Header(_ context.Context, id, host string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != credID {
		return "", "", core.ErrNotFound
	}
	f.hosts = append(f.hosts, host)
	return "Authorization", "Bearer " + f.token, nil
}

func (f *fakeCreds) Token(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != credID {
		return "", core.ErrNotFound
	}
	return f.token, nil
}

func (f *fakeCreds) Refresh(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	if id != credID || f.next == "" {
		return errors.New("static credential cannot be refreshed")
	}
	f.token, f.next = f.next, ""
	return nil
}

func (f *fakeCreds) refreshCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes
}

const credID = "vcr_test"

// logBuffer captures every log record, debug included.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newPool returns a pool logging into logs, shut down with the test.
func newPool(t *testing.T, creds core.CredentialSource, logs *logBuffer, idle time.Duration) *mcpbridge.Pool {
	t.Helper()
	return newPoolTimers(t, creds, logs, idle, nil)
}

// newPoolTimers is newPool with idle timers the test fires (nil: real
// ones), allowing the stdio executables given.
func newPoolTimers(t *testing.T, creds core.CredentialSource, logs *logBuffer, idle time.Duration, timers *idleTimers, stdio ...string) *mcpbridge.Pool {
	t.Helper()
	allow, err := mcpbridge.NewStdioAllow(stdio...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mcpbridge.Config{
		StdioAllow:     allow,
		Credentials:    creds,
		IdleTimeout:    idle,
		ConnectTimeout: 5 * time.Second,
		Logger:         logs.logger(),
		ClientInfo:     mcpbridge.ClientInfo{Name: "switchboard-test", Version: "0"},
	}
	if timers != nil {
		cfg.AfterFunc = timers.AfterFunc
	}
	p := mcpbridge.New(cfg)
	t.Cleanup(p.Shutdown)
	return p
}

// idleTimers stand in for the pool's idle timers: none runs out unless the
// test fires it.
type idleTimers struct {
	mu      sync.Mutex
	started []*idleTimer
}

type idleTimer struct {
	f       func()
	mu      sync.Mutex
	stopped bool
}

func (m *idleTimers) AfterFunc(_ time.Duration, f func()) mcpbridge.Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	tm := &idleTimer{f: f}
	m.started = append(m.started, tm)
	return tm
}

func (tm *idleTimer) Stop() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

func (tm *idleTimer) isStopped() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.stopped
}

// last is the timer started last; the test fails when none was.
func (m *idleTimers) last(t *testing.T) *idleTimer {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.started) == 0 {
		t.Fatal("no idle timer was started")
	}
	return m.started[len(m.started)-1]
}

// fire runs the timer's function as its running out would. A real timer
// can run out as it is stopped, so fire runs a stopped timer's function too.
func (tm *idleTimer) fire() { tm.f() }

// eventually polls cond until it holds or 30 seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// byName indexes entries by tool name.
func byName(entries []mcpbridge.Entry) map[string]mcpbridge.Entry {
	m := map[string]mcpbridge.Entry{}
	for _, e := range entries {
		m[e.Tool.Def().Name] = e
	}
	return m
}

// call calls a tool by name, failing the test if it is not offered or
// returns a Go error (the bridge never should).
func call(t *testing.T, entries []mcpbridge.Entry, name, input string) core.ToolResult {
	t.Helper()
	e, ok := byName(entries)[name]
	if !ok {
		t.Fatalf("tool %s not offered; have %v", name, names(entries))
	}
	res, err := e.Tool.Call(t.Context(), core.ToolCall{SessionID: "ses_1", ID: "toolu_1", Name: name, Input: []byte(input)})
	if err != nil {
		t.Fatalf("call %s: Go error %v (want a tool result)", name, err)
	}
	return res
}

func names(entries []mcpbridge.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Tool.Def().Name)
	}
	return out
}
