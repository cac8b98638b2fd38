package schedules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// The schedule tool's limits per session.
const (
	// MaxPending follow-ups may wait at once.
	MaxPending = 10
	// MaxPerDay follow-ups may be due within any 24 hours.
	MaxPerDay = 24
	// MinDelay is the soonest a follow-up may be due.
	MinDelay = time.Minute
	// MaxDelay is the latest.
	MaxDelay = 30 * 24 * time.Hour
)

// ToolName is the schedule tool's name.
const ToolName = "schedule"

// SessionTools offers every session the schedule tool (a
// providers.SessionTools).
type SessionTools struct {
	Store  Store
	Runner interface{ Poke() }
	Clock  Clock // default the wall clock
}

// Tools returns the schedule tool of session s.
func (t *SessionTools) Tools(_ context.Context, s *core.Session, _ *core.Agent) ([]core.Tool, error) {
	clock := t.Clock
	if clock == nil {
		clock = core.WallClock{}
	}
	return []core.Tool{&tool{store: t.Store, runner: t.Runner, clock: clock, session: s.ID}}, nil
}

type tool struct {
	store   Store
	runner  interface{ Poke() }
	clock   Clock
	session string
}

func (t *tool) Def() core.ToolDef {
	return core.ToolDef{
		Name: ToolName,
		Description: "Wake yourself up later in this conversation: at the time you give, the message you give arrives here as a new message and you continue from it " +
			"(check on a deploy in an hour, look at CI again tomorrow morning). Between now and then nothing runs. " +
			"Give \"in\" (a duration such as 30m, 2h or 1h30m) or \"at\" (an RFC 3339 time), and \"message\". " +
			"\"cancel\" with a schedule id cancels one you made; \"list\" true lists them. " +
			fmt.Sprintf("Limits: at most %d pending, %d within any 24 hours, none sooner than %s or later than %d days.", MaxPending, MaxPerDay, MinDelay, int(MaxDelay.Hours()/24)),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"in":{"type":"string","description":"When, from now: a duration such as 45m, 2h, 1h30m."},` +
			`"at":{"type":"string","description":"When: an RFC 3339 time, e.g. 2030-05-06T09:00:00+02:00."},` +
			`"message":{"type":"string","description":"What you will be told then: say what to check and why."},` +
			`"cancel":{"type":"string","description":"The id of a follow-up you scheduled, to cancel it."},` +
			`"list":{"type":"boolean","description":"List the follow-ups you scheduled that are still to come."}}}`),
	}
}

type toolInput struct {
	In      string `json:"in"`
	At      string `json:"at"`
	Message string `json:"message"`
	Cancel  string `json:"cancel"`
	List    bool   `json:"list"`
}

func (t *tool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in toolInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("the input must be a JSON object: %v", err), nil
	}
	switch {
	case in.List:
		return t.list(ctx)
	case in.Cancel != "":
		return t.cancel(ctx, in.Cancel)
	}
	return t.create(ctx, in)
}

func refuse(format string, args ...any) core.ToolResult {
	return core.ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}

func (t *tool) create(ctx context.Context, in toolInput) (core.ToolResult, error) {
	now := t.clock.Now()
	msg := strings.TrimSpace(in.Message)
	var at time.Time
	switch {
	case msg == "":
		return refuse("\"message\" is required: what you want to be told when you wake up"), nil
	case (in.In == "") == (in.At == ""):
		return refuse("give \"in\" (e.g. 1h) or \"at\" (an RFC 3339 time), one of them"), nil
	case in.In != "":
		d, err := time.ParseDuration(strings.ReplaceAll(in.In, " ", ""))
		if err != nil {
			return refuse("\"in\" %q is not a duration: write it like 45m, 2h or 1h30m", in.In), nil
		}
		at = now.Add(d)
	default:
		var err error
		if at, err = time.Parse(time.RFC3339, in.At); err != nil {
			return refuse("\"at\" %q is not an RFC 3339 time (e.g. 2030-05-06T09:00:00Z)", in.At), nil
		}
	}
	switch {
	case at.Before(now.Add(MinDelay)):
		return refuse("a follow-up must be at least %s away; %s is too soon", MinDelay, at.UTC().Format(time.RFC3339)), nil
	case at.After(now.Add(MaxDelay)):
		return refuse("a follow-up may be at most %d days away", int(MaxDelay.Hours()/24)), nil
	}
	mine, err := t.mine(ctx)
	if err != nil {
		return core.ToolResult{}, err
	}
	pending, near := 0, 0
	for _, sc := range mine {
		if sc.NextAt != nil {
			pending++
		}
		if sc.At != nil && sc.At.After(at.Add(-24*time.Hour)) && sc.At.Before(at.Add(24*time.Hour)) {
			near++
		}
	}
	switch {
	case pending >= MaxPending:
		return refuse("you already have %d follow-ups pending, the most a session may; cancel one first (\"cancel\") or wait for one to come", pending), nil
	case near >= MaxPerDay:
		return refuse("you already have %d follow-ups within 24 hours of %s, the most a session may", near, at.UTC().Format(time.RFC3339)), nil
	}
	due := core.NewTime(at)
	sc, err := t.store.CreateSchedule(ctx, &core.Schedule{At: &due, NextAt: &due, CreatedBy: t.session,
		Target: core.ScheduleTarget{SessionID: t.session, Input: "[Scheduled follow-up] " + msg}})
	if err != nil {
		return core.ToolResult{}, err
	}
	if t.runner != nil {
		t.runner.Poke()
	}
	return core.ToolResult{Output: fmt.Sprintf("Scheduled %s for %s (in %s). Your turn can end now; the message will arrive then.",
		sc.ID, at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second))}, nil
}

// mine lists the follow-ups this session's model made.
func (t *tool) mine(ctx context.Context) ([]*core.Schedule, error) {
	var out []*core.Schedule
	err := core.EachSchedule(ctx, t.store, core.ScheduleQuery{Session: t.session}, func(sc *core.Schedule) bool {
		if sc.CreatedBy == t.session {
			out = append(out, sc)
		}
		return true
	})
	return out, err
}

func (t *tool) list(ctx context.Context) (core.ToolResult, error) {
	mine, err := t.mine(ctx)
	if err != nil {
		return core.ToolResult{}, err
	}
	var b strings.Builder
	for _, sc := range mine {
		if sc.NextAt != nil {
			fmt.Fprintf(&b, "%s at %s: %s\n", sc.ID, sc.NextAt.UTC().Format(time.RFC3339), strings.TrimPrefix(sc.Target.Input, "[Scheduled follow-up] "))
		}
	}
	if b.Len() == 0 {
		return core.ToolResult{Output: "No follow-up is pending."}, nil
	}
	return core.ToolResult{Output: b.String()}, nil
}

func (t *tool) cancel(ctx context.Context, id string) (core.ToolResult, error) {
	sc, err := t.store.GetSchedule(ctx, id)
	if errors.Is(err, core.ErrNotFound) || err == nil && sc.CreatedBy != t.session {
		return refuse("no follow-up %q of yours", id), nil
	}
	if err != nil {
		return core.ToolResult{}, err
	}
	if err := t.store.DeleteSchedule(ctx, id); err != nil && !errors.Is(err, core.ErrNotFound) {
		return core.ToolResult{}, err
	}
	return core.ToolResult{Output: "Canceled " + id + "."}, nil
}
