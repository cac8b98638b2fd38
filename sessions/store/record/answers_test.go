package record

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestToolAnswers: only a user.custom_tool_result or a
// user.tool_confirmation is a tool answer, which AnswersPending checks
// against the calls the session waits for; with none, the queue's read
// pass needs no record.
func TestToolAnswers(t *testing.T) {
	answer := func(typ, id string) core.Event {
		return core.NewInput(typ, []byte(`{"tool_use_id":"`+id+`","result":"allow"}`))
	}
	message := core.NewInput(core.TypeUserMessage, []byte(`{"text":"hi"}`))
	waiting := &core.Session{ID: "ses_1", PendingAction: &core.PendingAction{ToolUseIDs: []string{"tu_1"}}}
	tests := []struct {
		name    string
		inputs  []core.Event
		answers bool
		refused bool // by AnswersPending, for a session waiting for tu_1
	}{
		{name: "none", answers: false},
		{name: "a message", inputs: []core.Event{message}, answers: false},
		{name: "an interrupt and a message", inputs: []core.Event{core.NewInput(core.TypeUserInterrupt, []byte(`{}`)), message}, answers: false},
		{name: "a confirmation of the waiting call", inputs: []core.Event{message, answer(core.TypeUserToolConfirmation, "tu_1")}, answers: true},
		{name: "a result for another call", inputs: []core.Event{answer(core.TypeUserCustomToolResult, "tu_2"), message}, answers: true, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasToolAnswer(tt.inputs); got != tt.answers {
				t.Fatalf("HasToolAnswer = %v, want %v", got, tt.answers)
			}
			err := AnswersPending(waiting, tt.inputs)
			if refused := errors.Is(err, core.ErrConflict); refused != tt.refused || (err != nil && !refused) {
				t.Fatalf("AnswersPending = %v, want refused %v", err, tt.refused)
			}
		})
	}
}
