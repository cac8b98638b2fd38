package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestDeploymentID(t *testing.T) {
	t.Run("generated once and stable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "deployment-id")
		first, err := deploymentID(path)
		if err != nil {
			t.Fatal(err)
		}
		if !deploymentPattern.MatchString(first) {
			t.Fatalf("id %q cannot name Docker objects", first)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("the id is not kept private: %v %v", fi.Mode(), err)
		}
		again, err := deploymentID(path)
		if err != nil || again != first {
			t.Fatalf("after a restart: %q, %v; want %q", again, err, first)
		}
	})
	t.Run("differs between data directories", func(t *testing.T) {
		a, errA := deploymentID(filepath.Join(t.TempDir(), "deployment-id"))
		b, errB := deploymentID(filepath.Join(t.TempDir(), "deployment-id"))
		if errA != nil || errB != nil || a == b {
			t.Fatalf("%q (%v) and %q (%v): want two ids", a, errA, b, errB)
		}
	})
	t.Run("an edited file reads trimmed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "deployment-id")
		if err := os.WriteFile(path, []byte("  prod-1 \n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if id, err := deploymentID(path); err != nil || id != "prod-1" {
			t.Fatalf("got %q, %v; want prod-1", id, err)
		}
	})
	for name, path := range map[string]string{
		"unreadable":             t.TempDir(), // a directory
		"in a missing directory": filepath.Join(t.TempDir(), "gone", "deployment-id"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := deploymentID(path); err == nil || !strings.HasPrefix(err.Error(), "SWITCHBOARD_DATA_DIR: ") {
				t.Fatalf("err = %v, want one naming SWITCHBOARD_DATA_DIR", err)
			}
		})
	}
}

// fakeLog keeps what is appended to sessions' logs; err fails every
// append.
type fakeLog struct {
	appended map[string][]core.Event
	err      error
}

func (f *fakeLog) Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.appended[sessionID] = append(f.appended[sessionID], req.Events...)
	return req.Events, nil
}

// TestEgressEventsRecord: a decision is one internal sandbox.egress event
// in the session's log; a failed append is logged, unless the session was
// archived meanwhile.
func TestEgressEventsRecord(t *testing.T) {
	body := core.EgressBody{Host: "pypi.org:443", Decision: "allow"}
	tests := []struct {
		name     string
		err      error
		appended int
		warned   bool
	}{
		{"appended", nil, 1, false},
		{"an archived session", fmt.Errorf("session sesn_1: %w", core.ErrArchived), 0, false},
		{"a failing store", errors.New("disk full"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &fakeLog{appended: map[string][]core.Event{}, err: tt.err}
			var logged bytes.Buffer
			events := egressEvents{store: store, log: slog.New(slog.NewTextHandler(&logged, nil))}
			events.record(t.Context(), "sesn_1", body)
			evs := store.appended["sesn_1"]
			if len(evs) != tt.appended {
				t.Fatalf("appended %d events, want %d", len(evs), tt.appended)
			}
			if warned := strings.Contains(logged.String(), "log an egress decision"); warned != tt.warned {
				t.Errorf("warned %v, want %v: %s", warned, tt.warned, logged.String())
			}
			if len(evs) == 0 {
				return
			}
			var got core.EgressBody
			if err := json.Unmarshal(evs[0].Body, &got); err != nil {
				t.Fatal(err)
			}
			if evs[0].Type != core.TypeSandboxEgress || evs[0].Level != core.LevelInternal || got != body {
				t.Errorf("event %s (%s) %+v, want an internal %s with the decision", evs[0].Type, evs[0].Level, got, core.TypeSandboxEgress)
			}
		})
	}
}

// TestOpenWithoutSandbox: sessions run without a sandbox when it is off,
// or when no engine answers and the mode was left open; asked for, a
// missing engine is one line naming SWITCHBOARD_SANDBOX.
func TestOpenWithoutSandbox(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	tests := []struct {
		mode    string
		wantErr string
		// wantOff: the cause Open gives for running without a sandbox
		// begins so.
		wantOff string
	}{
		{"none", "", "SWITCHBOARD_SANDBOX is none"},
		{"", "", "no Docker engine answers at unix:///nonexistent/docker.sock"},
		{"docker", "SWITCHBOARD_SANDBOX=docker: ", ""},
	}
	for _, tt := range tests {
		t.Run("SWITCHBOARD_SANDBOX="+tt.mode, func(t *testing.T) {
			v := defaults(t)
			v["SWITCHBOARD_SANDBOX"] = tt.mode
			s, err := LoadSettings(v, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			d, off, err := Open(t.Context(), s, Deps{})
			if d != nil {
				t.Fatal("a backend without an engine")
			}
			if (off == nil) != (tt.wantOff == "") || off != nil && !strings.HasPrefix(off.Cause, tt.wantOff) {
				t.Fatalf("off = %+v, want a cause starting %q", off, tt.wantOff)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("err = %v, want one line starting %q", err, tt.wantErr)
			}
		})
	}
}

// TestOffOf: the cause of sandboxes left off names what Connect found,
// and the fix is the one change for it.
func TestOffOf(t *testing.T) {
	s := Settings{image: "switchboard-sandbox:latest"}
	tests := []struct {
		name       string
		err        error
		cause, fix string
	}{
		{"no image", fmt.Errorf("%w: switchboard-sandbox:latest (nothing is pulled): %w", ErrNoImage, core.ErrSandboxUnavailable),
			"the Docker engine answers but has no image switchboard-sandbox:latest (nothing is pulled)", "build it with scripts/sandbox-image --full"},
		{"no engine", fmt.Errorf("%w at unix:///var/run/docker.sock (connection refused): %w", ErrNoEngine, core.ErrSandboxUnavailable),
			"no Docker engine answers at unix:///var/run/docker.sock (connection refused)", "start the Docker engine"},
		{"else", fmt.Errorf("network\nsetup: %w", core.ErrSandboxUnavailable),
			"network setup: sandbox unavailable", "set SWITCHBOARD_SANDBOX to docker and restart"},
	}
	t.Run("no image of its own", func(t *testing.T) {
		off := offOf(Settings{image: "acme/sandbox:3"}, fmt.Errorf("%w: acme/sandbox:3 (nothing is pulled): %w", ErrNoImage, core.ErrSandboxUnavailable))
		if !strings.Contains(off.Cause, "acme/sandbox:3 (SWITCHBOARD_SANDBOX_IMAGE") || !strings.HasPrefix(off.Fix, "load or build acme/sandbox:3") {
			t.Fatalf("%+v: the fix for a named image is to load or build that image", off)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off := offOf(s, tt.err)
			if off.Cause != tt.cause || !strings.HasPrefix(off.Fix, tt.fix) {
				t.Fatalf("%+v, want cause %q and a fix starting %q", off, tt.cause, tt.fix)
			}
			// The old advice, which makes serve refuse to start when the
			// image is what is missing.
			if tt.name != "else" && strings.Contains(off.Fix, "SWITCHBOARD_SANDBOX to docker") {
				t.Errorf("the fix %q is not the one for %s", off.Fix, tt.name)
			}
		})
	}
}
