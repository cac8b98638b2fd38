package record

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// storedSessions are session records in the shapes a store writes: new,
// from a platform, mid-turn, finished, paused on a budget, forked,
// linked, and with strings and numbers at the edges of their encoding.
func storedSessions() []core.Session {
	at := core.NewTime(time.Date(2026, 11, 30, 4, 5, 6, 789_000_000, time.UTC))
	fresh := core.Session{ID: "ses_1", Status: core.StatusQueued, Agent: core.AgentRef{ID: "agt_1", Version: 3},
		Metadata: map[string]string{}, CreatedAt: at, UpdatedAt: at}
	slack := fresh
	slack.Origin = &core.Origin{Provider: "slack", Key: "slack:T1:C1:1700000000.000100", TenantID: "T1", URL: "https://x.slack.com/archives/C1/p1700000000000100"}
	slack.Metadata = map[string]string{"z": "last", "a": "first", "channel": "C1"}
	slack.Tenant = "slack:T1"
	running := slack
	running.Status, running.TurnID, running.TurnText, running.LastSeq = core.StatusRunning, "turn_1", "working on <it> & more\n", 42
	running.Usage = core.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadInputTokens: 9, CacheCreationInputTokens: 1}
	done := running
	done.Status, done.TurnID, done.TurnText, done.Turns = core.StatusIdle, "", "", 1
	done.StopReason = core.ReasonCompleted
	done.Result = &core.TurnResult{TurnID: "turn_1", YieldReason: core.ReasonCompleted, Text: "done", CompletedAt: at}
	cost := 12345.678
	done.CostUSD = &cost
	paused := done
	paused.Status, paused.StopReason = core.StatusAwaitingInput, core.ReasonBudgetExceeded
	paused.PendingAction = &core.PendingAction{ToolUseIDs: []string{"tu_1"}, Budget: &core.BudgetPause{Name: core.BudgetCostUSD, Limit: 1.5, Spent: 1.5000001}}
	paused.Limits = &core.Limits{MaxSessionCostUSD: 1.5, MaxSteps: 4}
	paused.Result = &core.TurnResult{TurnID: "turn_2", Text: "", CompletedAt: core.Time{}}
	forked := fresh
	forked.ForkedFrom = &core.ForkRef{Session: "ses_0", Seq: 9}
	forked.Environment, forked.ClientTokenHash = "env_1", "sha256:abc"
	forked.Metadata = nil
	forked.Links = []core.Link{{Key: "github:o/r#1", AddedBy: "slack:U1", AddedAt: at, URL: "https://github.com/o/r/pull/1"}, {Key: "linear:x", AddedBy: "api"}}
	forked.Origin = &core.Origin{Provider: "api", Key: "api:ses_1", Title: "tab\there \x01 ünïcode"}
	odd := fresh
	odd.StopReason = "a<b>&c" // json.Marshal escapes what a Reason writes
	odd.Result = &core.TurnResult{YieldReason: "é\u2029"}
	odd.ID, odd.Status = "ses_\xff", ""
	odd.Metadata = map[string]string{"m<&>": "html \u2028 é \"q\"", "": "\x00"}
	out := []core.Session{{}, fresh, slack, running, done, paused, forked, odd}
	// Costs in both of the forms encoding/json writes a float in.
	for _, cost := range []float64{0, 0.0123, -0.5, 1e-7, 3e21, 1e21, 999999999999999900000} {
		priced := *done.Clone()
		priced.CostUSD = &cost
		out = append(out, priced)
	}
	return out
}

// TestSessionJSONAsEncodingJSON: EncodeSession writes the very bytes
// encoding/json writes of every stored shape.
func TestSessionJSONAsEncodingJSON(t *testing.T) {
	for i, s := range storedSessions() {
		if err := checkJSON(&s, mustEncodeSession); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}
}

// TestSessionJSONEveryField fills every field of a session, and of what
// it points to, with a value that is not zero, so that a field added to
// core.Session and not to EncodeSession fails here.
func TestSessionJSONEveryField(t *testing.T) {
	var s core.Session
	fill(reflect.ValueOf(&s).Elem(), 0)
	s.FirstText = "" // never part of the record
	if s.Origin == nil || s.PendingAction == nil || s.PendingAction.Budget == nil || len(s.Links) == 0 || len(s.Metadata) == 0 {
		t.Fatalf("not every field was filled: %+v", s)
	}
	if err := checkJSON(&s, mustEncodeSession); err != nil {
		t.Fatal(err)
	}
}

// TestEncodeSessionRefusesWhatEncodingJSONRefuses: a cost that is not a
// number makes no record, as with encoding/json.
func TestEncodeSessionRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := storedSessions()[1]
		s.CostUSD = &f
		if _, err := core.EncodeJSON(&s); err == nil {
			t.Fatalf("encoding/json wrote a cost of %v", f)
		}
		if raw, err := EncodeSession(&s); err == nil {
			t.Fatalf("a cost of %v encoded as %s", f, raw)
		}
	}
}

func FuzzSessionJSON(f *testing.F) {
	f.Add("ses_1", "slack:T1:C1:1.2", "k", "v", "text", 0.5, int64(3))
	f.Add("ses_\x00", "<&>", "", "\u2028", "\xff", 1e-9, int64(-1))
	f.Fuzz(func(t *testing.T, id, key, mk, mv, text string, cost float64, tokens int64) {
		s := storedSessions()[4]
		s.ID, s.Origin.Key, s.TurnText, s.Usage.InputTokens = id, key, text, tokens
		s.Metadata = map[string]string{mk: mv, "other": text}
		s.CostUSD = &cost
		if math.IsNaN(cost) || math.IsInf(cost, 0) {
			return
		}
		if err := checkJSON(&s, mustEncodeSession); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkSessionJSON writes a finished session's record both ways: the
// baseline is encoding/json's.
func BenchmarkSessionJSON(b *testing.B) {
	s := storedSessions()[4]
	benchJSON(b, &s, mustEncodeSession, func(raw []byte) (*core.Session, error) { return Decode[core.Session]("session", raw) })
}

// mustEncodeSession is EncodeSession for a session whose record encodes.
func mustEncodeSession(s *core.Session) []byte {
	raw, err := EncodeSession(s)
	if err != nil {
		panic(err)
	}
	return raw
}
