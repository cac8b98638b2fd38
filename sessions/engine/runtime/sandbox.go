package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Sandboxes is the sandbox backend as sessions move between replicas: each
// replica runs the sandboxes of the sessions it holds on its own engine,
// so a session that moves finds none of its files unless workspaces are on
// storage every replica reaches.
type Sandboxes interface {
	// SharedWorkspaces reports whether sessions' workspaces are on storage
	// every replica reaches: a session that moves keeps its files.
	SharedWorkspaces() bool
	// Drop removes the session's sandbox from this replica's engine (its
	// workspace too, unless shared): another replica runs the session now,
	// or it came back and what is left here is from before it left.
	Drop(ctx context.Context, sessionID string) error
}

// arrive runs before the first cycle of a session that moved here: the
// sandbox this replica may still have of it is stale, and when the
// session had one elsewhere its files are gone, which the log (and so the
// model) is told with session.sandbox_reset.
func (r *Runtime) arrive(ctx context.Context, l core.Lease) error {
	sb := r.cfg.Sandboxes
	if sb == nil || !l.Moved() {
		return nil
	}
	if err := sb.Drop(ctx, l.SessionID); err != nil {
		// A leftover costs disk; its next start finds it stale by label.
		r.log.Warn("remove a sandbox left from before the session moved away", "session_id", l.SessionID, "err", err)
	}
	if sb.SharedWorkspaces() {
		return nil
	}
	events, err := r.store.Events(ctx, l.SessionID, 0, 0)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if !hadSandbox(events) {
		return nil
	}
	ev := core.NewEvent(core.TypeSandboxReset, core.LevelProgress, core.ActorSystem, core.SandboxResetBody{Reason: core.ResetMoved})
	_, err = r.store.Append(ctx, l.SessionID, core.AppendRequest{Epoch: l.Epoch, Events: []core.Event{ev}})
	if errors.Is(err, core.ErrArchived) {
		return nil // the cycle finds it archived and lets it rest
	}
	if err != nil {
		return fmt.Errorf("log sandbox reset: %w", err)
	}
	r.log.Info("session moved here from another replica; its sandbox starts afresh", "session_id", l.SessionID, "previous", l.Previous)
	return nil
}

// hadSandbox reports whether the session worked in a sandbox since its
// last reset: a session that never did loses nothing when it moves.
func hadSandbox(events []core.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case core.TypeSandboxReset:
			return false
		case core.TypeAgentToolUse:
			var b core.ToolUseBody
			if events[i].Decode(&b) == nil && core.IsHandsTool(b.Name) {
				return true
			}
		}
	}
	return false
}

// left removes the sandbox of a session another replica took over: it is
// an orphan here.
func (r *Runtime) left(ctx context.Context, sessionID string) {
	if r.cfg.Sandboxes == nil || ctx.Err() != nil {
		return
	}
	if err := r.cfg.Sandboxes.Drop(ctx, sessionID); err != nil {
		r.log.Warn("remove the sandbox of a session taken over by another replica", "session_id", sessionID, "err", err)
	}
}
