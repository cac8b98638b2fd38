package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestRetryTurn(t *testing.T) {
	ended := func(r core.Reason) *core.Session {
		return &core.Session{ID: "ses_1", Status: core.StatusAfter(r), Result: &core.TurnResult{TurnID: "turn_9", YieldReason: r}}
	}
	running := ended(core.ReasonError)
	running.Status, running.TurnID = core.StatusRunning, "turn_10"
	archived := ended(core.ReasonError)
	archived.Status = core.StatusArchived
	paused := ended(core.ReasonError)
	paused.Status, paused.TurnID = core.StatusAwaitingInput, "turn_10"
	paused.PendingAction = &core.PendingAction{Budget: &core.BudgetPause{Name: core.BudgetTokens, Limit: 10, Spent: 12}}
	tests := []struct {
		name   string
		s      *core.Session
		turnID string
		want   string
		err    error
		msg    string
	}{
		{"after an error", ended(core.ReasonError), "", "turn_9", nil, ""},
		{"naming the turn", ended(core.ReasonCanceled), "turn_9", "turn_9", nil, ""},
		{"after a deadline", ended(core.ReasonDeadlineExceeded), "", "turn_9", nil, ""},
		{"after max steps", ended(core.ReasonMaxSteps), "", "turn_9", nil, ""},
		{"after a completed turn", ended(core.ReasonCompleted), "", "", core.ErrConflict, "the last turn ended completed"},
		{"while waiting for an answer", ended(core.ReasonNeedsInput), "", "", core.ErrConflict, "ended needs_input"},
		{"an older turn", ended(core.ReasonError), "turn_8", "", core.ErrConflict, "turn turn_8 is not the last finished turn"},
		{"no turn yet", &core.Session{ID: "ses_1", Status: core.StatusIdle}, "", "", core.ErrConflict, "no finished turn"},
		{"a turn running", running, "", "", core.ErrConflict, "running or queued"},
		{"archived", archived, "", "", core.ErrArchived, "archived"},
		{"a turn paused by its budget", paused, "", "", core.ErrConflict, "paused by its max_session_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := core.RetryTurn(tt.s, tt.turnID)
			if got != tt.want || !errors.Is(err, tt.err) || tt.err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("RetryTurn = %q, %v; want %q, %v (%q)", got, err, tt.want, tt.err, tt.msg)
			}
		})
	}
}
