package storecopy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
	"github.com/switchboardhq/switchboard/sessions/store/storecopy"
)

// TestCopyLeavesConsole: console sign-ins and failed sign-ins are
// ephemeral. The copy carries none of the source's, and the target's own
// neither make it "not empty" nor are touched.
func TestCopyLeavesConsole(t *testing.T) {
	keys := fakeKeys{name: "k1"}
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ctx := t.Context()
	signIn := func(id string) *core.ConsoleSession {
		return &core.ConsoleSession{ID: id, CSRF: "c", KeyCheck: "k", CreatedAt: clk.t, ExpiresAt: clk.t.Add(time.Hour)}
	}
	src := openBolt(t, clk)
	must(t, src.CreateConsoleSession(ctx, signIn("from-source")))
	_, err := src.ReserveSignIn(ctx, "192.0.2.1", clk.t, time.Minute, 5)
	must(t, err)
	dst := openPostgres(t, pgtest.DSN(t), clk)
	must(t, dst.CreateConsoleSession(ctx, signIn("on-target")))

	_, err = storecopy.Copy(ctx, src, dst, keys)
	must(t, err)
	if _, err := dst.GetConsoleSession(ctx, "from-source", clk.t); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("the source's sign-in on the target = %v, want ErrNotFound", err)
	}
	if n, err := dst.SignInFailures(ctx, "192.0.2.1", clk.t, time.Minute); err != nil || n != 0 {
		t.Errorf("the source's failures on the target = %d, %v; want 0", n, err)
	}
	if _, err := dst.GetConsoleSession(ctx, "on-target", clk.t); err != nil {
		t.Errorf("the target's own sign-in: %v", err)
	}
}
