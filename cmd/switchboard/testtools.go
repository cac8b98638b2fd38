//go:build switchboard_testtools

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/switchboardhq/switchboard/core"
)

// testTools adds test_block, a tool that blocks until its turn ends and
// appends each call's id to $SWITCHBOARD_TEST_TOOL_LOG, so crash tests can
// see whether a call was run again; and, when $SWITCHBOARD_TEST_PANIC_TOOL
// names one, a tool of that name that panics when called, so a test sees
// a panic end its turn and nothing else. Only test builds have them.
func testTools(getenv func(string) string) []core.Tool {
	tools := []core.Tool{blockTool{path: getenv("SWITCHBOARD_TEST_TOOL_LOG")}}
	if name := getenv("SWITCHBOARD_TEST_PANIC_TOOL"); name != "" {
		tools = append(tools, panicTool{name: name})
	}
	return tools
}

type panicTool struct{ name string }

func (p panicTool) Def() core.ToolDef {
	return core.ToolDef{Name: p.name, Description: "panics", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (p panicTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	panic("test tool " + p.name + " panics as asked")
}

type blockTool struct{ path string }

func (blockTool) Def() core.ToolDef {
	return core.ToolDef{Name: "test_block", Description: "blocks until the turn ends", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (b blockTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	if b.path != "" {
		f, err := os.OpenFile(b.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return core.ToolResult{}, fmt.Errorf("test tool log: %w", err)
		}
		fmt.Fprintln(f, call.ID)
		_ = f.Sync()
		f.Close()
	}
	<-ctx.Done()
	return core.ToolResult{}, ctx.Err()
}

// turnFailpoint stops a turn at a harness failpoint for crash and
// fencing tests; nil when no test asks for one. With
// SWITCHBOARD_TEST_PARK_AFTER_ANSWER set, the turn parks for good right
// after its final answer is logged, so a crash test can SIGKILL the
// process between the answer and turn.completed (failpoint
// "after_answer"). With SWITCHBOARD_TEST_STOP_AFTER_RESPONSE set, the
// process stops itself (SIGSTOP) the first time a model response is in
// and not yet logged, after writing "failpoint stopped: after_response",
// so a fencing test can let its lease go to another replica and resume it
// (SIGCONT) right before its late append.
func turnFailpoint(getenv func(string) string) func(point string) {
	park := getenv("SWITCHBOARD_TEST_PARK_AFTER_ANSWER") != ""
	stop := getenv("SWITCHBOARD_TEST_STOP_AFTER_RESPONSE") != ""
	if !park && !stop {
		return nil
	}
	var once sync.Once
	return func(point string) {
		switch {
		case park && point == "after_answer":
			parkHere(point)
		case stop && point == "after_response":
			once.Do(func() { stopHere(point) })
		}
	}
}

// failpoint parks for good at an output sink's failpoint when
// SWITCHBOARD_TEST_<PROVIDER>_PARK names it (before_post: the intent is
// saved, nothing posted; after_post: posted, the position not saved;
// after_check_run: a GitHub check run created, the position not saved),
// so a crash test can SIGKILL the process in that window; nil otherwise.
// The failpoint is named "<provider> <point>" ("slack before_post"). Only
// test builds have it.
func failpoint(getenv func(string) string, provider string) func(point string) {
	want := getenv("SWITCHBOARD_TEST_" + strings.ToUpper(provider) + "_PARK")
	if want == "" {
		return nil
	}
	return func(point string) {
		if point == want {
			parkHere(provider + " " + point)
		}
	}
}

// parkHere parks the calling goroutine for good at the failpoint name,
// first writing "failpoint parked: <name>" as one line to stderr: crash
// tests wait for that line before they SIGKILL, so they know the process
// is in the window they mean to test.
// stopHere stops the whole process (SIGSTOP) before it returns. The
// signal is sent to this very thread: one sent to the process goes to its
// main thread, and on a busy machine this goroutine may run on, into the
// write the test means to find undone, before that thread is scheduled
// and the stop spreads.
func stopHere(point string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fmt.Fprintf(os.Stderr, "failpoint stopped: %s\n", point)
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}

func parkHere(name string) {
	fmt.Fprintf(os.Stderr, "failpoint parked: %s\n", name)
	select {}
}
