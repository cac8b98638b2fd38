package linear

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// turnWriter appends a turn the way the harness does.
type turnWriter struct {
	t  *testing.T
	w  core.Store
	id string
	tn string
}

func (r *rig) turn(sessionID string) *turnWriter {
	tw := &turnWriter{t: r.t, w: r.store, id: sessionID, tn: core.NewID(core.PrefixTurn)}
	tw.append(true, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}))
	return tw
}

func (tw *turnWriter) append(take bool, evs ...core.Event) {
	tw.t.Helper()
	if _, err := tw.w.Append(tw.t.Context(), tw.id, core.AppendRequest{TakeInputs: take, TurnID: tw.tn, Holder: "h", Events: evs}); err != nil {
		tw.t.Fatal(err)
	}
}

func thoughtEv(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelProgress, core.ActorAgent, core.MessageBody{Text: text})
}

func toolUse(id, name, input string) core.Event {
	return core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: name, Input: []byte(input)})
}

func toolResult(id, out string) core.Event {
	return core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: id, Output: out})
}

func answerEv(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text})
}

func (tw *turnWriter) end(reason core.Reason) {
	tw.append(false, core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: reason}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAfter(reason), StopReason: reason}))
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// start delivers created and waits for the acknowledging thought.
func (r *rig) start(agentSession string) *core.Session {
	r.t.Helper()
	if code := r.deliver(created(agentSession)); code != 200 {
		r.t.Fatalf("created: %d", code)
	}
	waitUntil(r.t, "the first thought", func() bool { return len(r.fake.shown()) > 0 })
	return r.sessionOf(agentSession)
}

func TestSinkRendersATurnAsActivities(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-10")
	if got := r.fake.shown(); !slices.Equal(got, []string{"thought: Received. Looking into it…"}) {
		t.Fatalf("before the turn: %v", got)
	}
	tw := r.turn(s.ID)
	tw.append(false, thoughtEv("Let me look at the code."), toolUse("tu_1", "bash", `{"command":"go test ./..."}`))
	waitUntil(t, "the action in progress", func() bool { return len(r.fake.shown()) == 3 })
	tw.append(false, toolResult("tu_1", "ok"))
	tw.append(false, toolUse("tu_2", "ask", `{"question":"x"}`), toolResult("tu_2", "posted"))
	tw.append(false, answerEv("Mondays are fixed."))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the sink to let go", func() bool { return r.sink.Settled(t.Context()) && len(r.fake.shown()) >= 5 })
	want := []string{
		"thought: Received. Looking into it…",
		"thought: Let me look at the code.",
		"action: bash (ephemeral)",
		"action: bash → ok",
		"response: Mondays are fixed.",
	}
	if got := r.fake.shown(); !slices.Equal(got, want) {
		t.Fatalf("activities\n got %q\nwant %q", got, want)
	}
	r.fake.mu.Lock()
	defer r.fake.mu.Unlock()
	if len(r.fake.updates) != 1 || r.fake.updates[0].ExternalURL != "https://sb.example/sessions/"+s.ID {
		t.Fatalf("session updates %+v", r.fake.updates)
	}
}

// TestSinkShowsWhatTheAgentLinked: a pull request the agent opened and
// linked during a Linear turn shows in the activity stream with its
// address; a link an admin added shows nothing.
func TestSinkShowsWhatTheAgentLinked(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-link")
	tw := r.turn(s.ID)
	tw.append(false, toolUse("tu_pr", "mcp_github_create_pull_request", `{"head":"fix","title":"Fix"}`))
	const url = "https://github.com/acme/app/pull/7"
	if _, err := r.store.AddLink(t.Context(), s.ID, core.LinkBody{Key: "github:acme/app#7", By: core.LinkedByAgent, URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.AddLink(t.Context(), s.ID, core.LinkBody{Key: "github:acme/app#8", By: core.LinkedByAdmin}); err != nil {
		t.Fatal(err)
	}
	tw.append(false, toolResult("tu_pr", `{"number":7}`))
	tw.append(false, answerEv("Opened the fix."))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the sink to let go", func() bool { return r.sink.Settled(t.Context()) && len(r.fake.shown()) >= 4 })
	var linked []string
	for _, a := range r.fake.shown() {
		if strings.HasPrefix(a, "action: Linked") {
			linked = append(linked, a)
		}
	}
	want := "action: Linked → [" + url + "](" + url + "): mentions of the agent there continue this session."
	if len(linked) != 1 || linked[0] != want {
		t.Fatalf("link activities %q, want one: %q (all: %q)", linked, want, r.fake.shown())
	}
}

func TestSinkQuestionsErrorsAndStops(t *testing.T) {
	tests := []struct {
		name   string
		write  func(tw *turnWriter)
		wanted string
	}{
		{"ask", func(tw *turnWriter) {
			tw.append(false, toolUse("tu_q", "ask", `{"question":"Which branch?"}`))
			tw.append(false, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "Which branch?", ToolUseID: "tu_q"}), toolResult("tu_q", "posted"))
			tw.end(core.ReasonNeedsInput)
		}, "elicitation: Which branch?"},
		{"model error", func(tw *turnWriter) {
			tw.append(false, core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "invalid x-api-key"}))
			tw.end(core.ReasonError)
		}, "error: I ran into an error: invalid x-api-key"},
		{"stopped", func(tw *turnWriter) { tw.end(core.ReasonCanceled) }, "response: Stopped."},
		{"out of time", func(tw *turnWriter) { tw.end(core.ReasonDeadlineExceeded) }, "error: I stopped: the turn ran out of time."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.startSink()
			s := r.start("as-" + tc.name)
			tc.write(r.turn(s.ID))
			waitUntil(t, "the sink to let go", func() bool { return r.sink.Settled(t.Context()) && len(r.fake.shown()) >= 2 })
			got := r.fake.shown()
			if len(got) != 2 || got[1] != tc.wanted {
				t.Fatalf("activities %q, want the ack then %q", got, tc.wanted)
			}
		})
	}
}

// TestSinkCoalescesThoughtsAndWaitsOutRateLimits: Linear answers
// RATELIMITED while a turn's events pile up; nothing is lost, and the
// thoughts logged meanwhile go out as one.
func TestSinkCoalescesThoughtsAndWaitsOutRateLimits(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-20")
	// Linear answers RATELIMITED until the whole turn is logged and a
	// call was refused, however long the appends take.
	r.fake.mu.Lock()
	r.fake.limited = math.MaxInt
	r.fake.mu.Unlock()
	tw := r.turn(s.ID)
	tw.append(false, thoughtEv("first idea"), toolUse("tu_1", "read", `{"path":"a.go"}`))
	tw.append(false, toolResult("tu_1", "package a"), thoughtEv("second idea"), toolUse("tu_2", "read", `{"path":"b.go"}`))
	tw.append(false, toolResult("tu_2", "package b"), thoughtEv("third idea"), toolUse("tu_3", "say", `{"text":"halfway"}`))
	tw.append(false, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "halfway", ToolUseID: "tu_3"}), toolResult("tu_3", "delivered"))
	tw.append(false, answerEv("all done"))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "a call answered RATELIMITED", func() bool {
		r.fake.mu.Lock()
		defer r.fake.mu.Unlock()
		return r.fake.refused > 0
	})
	r.fake.mu.Lock()
	r.fake.limited = 0
	r.fake.mu.Unlock()
	waitUntil(t, "the response", func() bool {
		got := r.fake.shown()
		return len(got) > 0 && got[len(got)-1] == "response: all done"
	})
	var thoughts []string
	results := 0
	for _, a := range r.fake.shown()[1:] {
		switch {
		case strings.HasPrefix(a, "thought: "):
			thoughts = append(thoughts, a)
		case strings.Contains(a, " → "):
			results++
		}
	}
	joined := strings.Join(thoughts, "\n")
	for _, want := range []string{"first idea", "second idea", "third idea", "halfway"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("thought %q lost: %q", want, r.fake.shown())
		}
	}
	t.Logf("activities: %q", r.fake.shown())
	if len(thoughts) >= 4 || results != 2 {
		t.Fatalf("%d thought activities for 4 thoughts (want them coalesced), %d results: %q", len(thoughts), results, r.fake.shown())
	}
}

func TestSinkSkipsAnActivityLinearRefuses(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-30")
	r.fake.mu.Lock()
	r.fake.refuse = "REFUSE-ME"
	r.fake.mu.Unlock()
	tw := r.turn(s.ID)
	tw.append(false, answerEv("REFUSE-ME please"))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the sink to let go", func() bool { return r.sink.Settled(t.Context()) })
	tw = r.turn(s.ID)
	tw.append(false, answerEv("second answer"))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the second answer", func() bool { return slices.Contains(r.fake.shown(), "response: second answer") })
}

// TestSinkKeepsAResponseWhoseLookupIsRateLimited: a post fails without
// telling whether Linear has it, and the lookup that follows is answered
// RATELIMITED; the response is still posted, once.
func TestSinkKeepsAResponseWhoseLookupIsRateLimited(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-50")
	r.fake.mu.Lock()
	r.fake.failPosts, r.fake.limitedLookups = 1, 1
	r.fake.mu.Unlock()
	tw := r.turn(s.ID)
	tw.append(false, answerEv("kept"))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the sink to let go", func() bool { return r.sink.Settled(t.Context()) })
	n := 0
	for _, a := range r.fake.shown() {
		if a == "response: kept" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("response posted %d times: %q", n, r.fake.shown())
	}
}

// TestSinkGoesOnWhenTheSessionUpdateIsRefused: Linear refuses the
// external URL; the session's activities still go out.
func TestSinkGoesOnWhenTheSessionUpdateIsRefused(t *testing.T) {
	r := newRig(t)
	r.fake.refuseUpdates = true
	r.startSink()
	s := r.start("as-60")
	tw := r.turn(s.ID)
	tw.append(false, answerEv("still shown"))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the response", func() bool { return slices.Contains(r.fake.shown(), "response: still shown") })
}

func TestActivityIDsAreStableUUIDs(t *testing.T) {
	a, b := activityID("ses_1", "response", 7), activityID("ses_1", "response", 7)
	if a != b || a == activityID("ses_1", "response", 8) || a == activityID("ses_2", "response", 7) {
		t.Fatalf("ids %s %s", a, b)
	}
	if len(a) != 36 || a[14] != '4' || !strings.ContainsRune("89ab", rune(a[19])) {
		t.Fatalf("%s is not a version 4 UUID", a)
	}
}
