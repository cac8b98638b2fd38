package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/client"
)

// TestDropWhenSessionMoves: two replicas (two deployments, here on one
// engine). The replica a session left drops its container; its workspace
// goes with it unless workspaces are on a shared volume driver, where the
// replica the session moved to finds the files.
func TestDropWhenSessionMoves(t *testing.T) {
	for _, tc := range []struct {
		name, driver string
		kept         bool
	}{
		{name: "local workspaces", driver: ""},
		// The local driver shares within one engine, which is what a
		// shared driver does across engines.
		{name: "shared workspaces", driver: "local", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			driver := func(c *Config) { c.WorkspaceDriver = tc.driver }
			a, b := newDocker(t, driver), newDocker(t, driver)
			if a.SharedWorkspaces() != tc.kept {
				t.Fatalf("shared workspaces %v, want %v", a.SharedWorkspaces(), tc.kept)
			}
			s := newSession()
			sh(t, a, s, "echo hi > /workspace/f")
			if err := a.Drop(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := a.cli.ContainerInspect(ctx, a.cfg.containerName(s), client.ContainerInspectOptions{}); err == nil {
				t.Fatal("the container of the session that moved away is still there")
			}
			_, err := a.cli.VolumeInspect(ctx, a.cfg.volumeName(s), client.VolumeInspectOptions{})
			if (err == nil) != tc.kept {
				t.Fatalf("workspace still there: %v, want %v", err == nil, tc.kept)
			}
			want := "gone"
			if tc.kept {
				want = "hi"
			}
			if got := strings.TrimSpace(string(sh(t, b, s, "cat /workspace/f 2>/dev/null || echo gone").Stdout)); got != want {
				t.Fatalf("the new replica reads %q, want %q", got, want)
			}
		})
	}
}
