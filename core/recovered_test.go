package core_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
)

// TestRecover: a panic in work that defers Recover is logged once with
// its value and stack and becomes ErrPanicked; work that returns leaves
// its error alone and logs nothing.
func TestRecover(t *testing.T) {
	for _, tc := range []struct {
		name    string
		work    func() error
		wantErr error
		logged  bool
	}{
		{"panic with a value", func() error { panic("boom") }, core.ErrPanicked, true},
		{"runtime error", func() error {
			var m map[string]int
			//lint:ignore SA5000 the runtime error is the case under test
			m["x"] = 1
			return nil
		}, core.ErrPanicked, true},
		{"returns an error", func() error { return core.ErrNotFound }, core.ErrNotFound, false},
		{"returns nil", func() error { return nil }, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			run := func() (err error) {
				defer core.Recover(log, &err, "session_id", "ses_1")
				return tc.work()
			}
			if err := run(); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			out := buf.String()
			want := 0
			if tc.logged {
				want = 1
			}
			if got := strings.Count(out, "msg=panic"); got != want {
				t.Fatalf("%d panic lines, logged %v:\n%s", got, tc.logged, out)
			}
			if tc.logged && (!strings.Contains(out, "session_id=ses_1") || !strings.Contains(out, "goroutine ") || !strings.Contains(out, "recovered_test.go")) {
				t.Fatalf("the panic line lacks its session, value or stack:\n%s", out)
			}
		})
	}
}

// TestRecoverWithoutError: a goroutine with nothing to return recovers
// and logs all the same.
func TestRecoverWithoutError(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer core.Recover(log, nil)
		panic("alone")
	}()
	<-done
	if !strings.Contains(buf.String(), "panic=alone") {
		t.Fatalf("log:\n%s", buf.String())
	}
}

// TestCrashStopsTheProcess: a panic in a store's commit stops the process
// with status 2, its stack logged, even under a caller that recovers
// panics.
func TestCrashStopsTheProcess(t *testing.T) {
	if os.Getenv(panictest.ChildEnv) != "" {
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		func() {
			defer core.Recover(log, nil)
			func() {
				defer core.Crash(log, "session_id", "ses_1")
				panic("commit bug")
			}()
		}()
		fmt.Fprintln(os.Stderr, "the process went on after the commit panicked")
		os.Exit(0)
	}
	out, status := panictest.Child(t, "TestCrashStopsTheProcess")
	if status != 2 || !strings.Contains(out, "panic in the store's commit") || !strings.Contains(out, `panic="commit bug"`) ||
		!strings.Contains(out, "goroutine ") || strings.Contains(out, "msg=panic ") {
		t.Fatalf("the child ended with status %d, want 2 with the commit's panic logged:\n%s", status, out)
	}
}
