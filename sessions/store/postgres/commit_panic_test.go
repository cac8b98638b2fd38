package postgres

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// childDSN hands the parent's schema to the child, which cannot clean a
// schema of its own up: it stops mid-test.
const childDSN = "SWITCHBOARD_TEST_PANIC_CHILD_DSN"

// TestCommitPanicStopsTheProcess: a panic in a write transaction stops the
// process, even on a goroutine that recovers panics (a session's turn
// does): the store cannot be trusted after one.
func TestCommitPanicStopsTheProcess(t *testing.T) {
	if os.Getenv(panictest.ChildEnv) != "" {
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		s, err := Open(t.Context(), os.Getenv(childDSN), Options{Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer core.Recover(log, nil)
			_ = s.write(t.Context(), "ses_1", func(pgx.Tx) ([]core.Change, error) { panic("commit bug") })
		}()
		fmt.Fprintln(os.Stderr, "the process went on after the commit panicked")
		os.Exit(0)
	}
	out, status := panictest.Child(t, "TestCommitPanicStopsTheProcess", childDSN+"="+pgtest.DSN(t))
	if status != 2 || !strings.Contains(out, "panic in the store's commit") || !strings.Contains(out, "session_id=ses_1") || strings.Contains(out, "went on") {
		t.Fatalf("the child ended with status %d, want 2 with the commit's panic logged:\n%s", status, out)
	}
}
