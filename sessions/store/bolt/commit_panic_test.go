package bolt

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"go.etcd.io/bbolt"
)

// TestCommitPanicStopsTheProcess: a panic in the committer stops the
// process, even when the writer waiting on it recovers panics (a
// session's turn does): the store cannot be trusted after one.
func TestCommitPanicStopsTheProcess(t *testing.T) {
	if os.Getenv(panictest.ChildEnv) != "" {
		s, _ := openTemp(t, Options{})
		func() {
			defer core.Recover(slog.New(slog.NewTextHandler(os.Stderr, nil)), nil)
			_ = s.commit.write(func(*bbolt.Tx) ([]core.Change, error) { panic("commit bug") })
		}()
		fmt.Fprintln(os.Stderr, "the process went on after the commit panicked")
		os.Exit(0)
	}
	out, status := panictest.Child(t, "TestCommitPanicStopsTheProcess")
	if status != 2 || !strings.Contains(out, "panic: commit bug") || strings.Contains(out, "went on") {
		t.Fatalf("the child ended with status %d, want 2 with the commit's panic:\n%s", status, out)
	}
}
