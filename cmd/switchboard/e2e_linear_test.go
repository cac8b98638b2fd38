package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestLinearCreatedShowsTheWorkAsActivities is acceptance 1: a signed
// created event is answered 200 before the model is asked; the thought
// that acknowledges it reaches Linear while the model still thinks (it
// takes 15 s); the tool call shows as actions, the answer as the
// response, and the agent session links to the session page.
func TestLinearCreatedShowsTheWorkAsActivities(t *testing.T) {
	w := startLinear(t, nil)
	w.ms.Push(
		modelserver.Step{Text: "Let me list the teams.", ToolCalls: []modelserver.ToolCall{{ID: "tu_teams", Name: "mcp_linear_list_teams"}}},
		modelserver.Step{Text: "Engineering owns the widgets."},
	)
	release := holdAnswer(t, w.ms) // the model thinks until the thought is seen
	as := w.created("as-created-1")
	id := w.session(as)
	w.fake.WaitFor(t, patience, "the first thought", func() bool { return countHolding(w.activities(as), "thought: ") > 0 })
	if n := count(w.srv.events(id), "agent.message"); n != 0 {
		t.Fatalf("the thought came after the model answered (%d agent messages)", n)
	}
	release()
	w.waitActivity(as, "response: Engineering owns the widgets.", patience)
	// The in-progress action is ephemeral, and skipped when the sink
	// finds the call's result already logged (this tool answers at once).
	var got []string
	for _, a := range w.activities(as) {
		if a != "action: mcp_linear_list_teams (ephemeral)" {
			got = append(got, a)
		}
	}
	// The acknowledging thought comes first and the response last. The
	// thought beside the tool call comes before the tool's result unless
	// the sink was behind and held it to coalesce with what follows (it
	// then goes out before the response): on a busy machine either order.
	want := []string{"thought: ", "thought: Let me list the teams.", "action: mcp_linear_list_teams → ", "response: Engineering owns the widgets."}
	if len(got) != len(want) {
		t.Fatalf("activities %q", w.activities(as))
	}
	if middle := []string{got[1], got[2]}; strings.HasPrefix(middle[0], "action: ") {
		got[1], got[2] = middle[1], middle[0]
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("activity %d is %q, want %q…; all %q", i, got[i], want[i], got)
		}
	}
	if !strings.Contains(got[2], "ENG") {
		t.Fatalf("the tool's result is not shown: %q", got[2])
	}
	sess, ok := w.fake.Session(as)
	if !ok || len(sess.ExternalURLs) != 1 || sess.ExternalURLs[0].URL != w.srv.url+"/sessions/"+id {
		t.Fatalf("external URL %+v", sess)
	}
	if !modelSawAll(w.ms, "Widgets break on Mondays") {
		t.Fatal("the model did not see the issue")
	}
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
}

// TestLinearPromptsSteerStopAndAnswer is acceptance 2: a prompt mid-turn
// steers the running turn; a prompt with the stop signal interrupts it;
// ask becomes an elicitation and the next prompt is the answer that
// resumes the session.
func TestLinearPromptsSteerStopAndAnswer(t *testing.T) {
	w := startLinear(t, nil)

	t.Run("steer", func(t *testing.T) {
		w.ms.Push(
			modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "tu_s", Name: "mcp_linear_list_teams"}}},
			modelserver.Step{Text: "Using staging as asked."},
		)
		release := holdAnswer(t, w.ms) // the first answer waits for the prompt
		as := w.created("as-steer")
		id := w.session(as)
		if err := w.ms.WaitRequests(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		w.prompted(as, "use the staging database", "")
		release()
		w.waitActivity(as, "response: Using staging as asked.", patience)
		_, evs := w.srv.waitIdle(id)
		if n := count(evs, "turn.started"); n != 1 {
			t.Fatalf("%d turns: the prompt did not steer the running one: %v", n, types(evs))
		}
		reqs := w.ms.Requests()
		if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Raw), "use the staging database") {
			t.Fatal("the model did not see the prompt")
		}
	})

	t.Run("stop", func(t *testing.T) {
		before := len(w.ms.Requests())
		w.ms.Push(modelserver.Step{Hang: true})
		as := w.created("as-stop-session")
		id := w.session(as)
		if err := w.ms.WaitRequests(t.Context(), before+1); err != nil {
			t.Fatal(err)
		}
		w.prompted(as, "Stop", "stop")
		st, _ := w.srv.waitIdle(id)
		if st.StopReason == nil || *st.StopReason != "canceled" {
			t.Fatalf("session %+v", st)
		}
		w.waitActivity(as, "response: Stopped.", patience)
	})

	t.Run("ask and answer", func(t *testing.T) {
		w.ms.Push(
			modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "tu_ask", Name: "ask", Input: map[string]string{"question": "Which branch should I use?"}}}},
			modelserver.Step{Text: "Working on main then."},
		)
		as := w.created("as-ask-session")
		id := w.session(as)
		w.waitActivity(as, "elicitation: Which branch should I use?", patience)
		w.srv.waitFor(id, "awaiting input", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })
		w.prompted(as, "main, please", "")
		w.waitActivity(as, "response: Working on main then.", patience)
		if !modelSaw(w.ms, "main, please") {
			t.Fatal("the model did not get the answer")
		}
	})
}

// TestLinearDeliveries is acceptance 3: a redelivered webhook appends
// nothing; a bad signature, or a timestamp two minutes old, is 401 and
// stores nothing.
func TestLinearDeliveries(t *testing.T) {
	w := startLinear(t, nil)
	bad := w.fake.CreatedEvent(fakelinear.SessionEvent{SessionID: "as-bad-signature", Issue: w.issue})
	req := w.fake.WebhookRequest(w.srv.url+"/webhooks/linear", bad)
	req.Header.Set("Linear-Signature", strings.Repeat("0", 64))
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("bad signature: %d", resp.StatusCode)
	}
	old := w.fake.CreatedEvent(fakelinear.SessionEvent{SessionID: "as-old-timestamp", Issue: w.issue, Timestamp: time.Now().Add(-2 * time.Minute)})
	if code, _ := w.deliver(old, ""); code != 401 {
		t.Fatalf("two-minute-old timestamp: %d", code)
	}
	for _, as := range []string{"as-bad-signature", "as-old-timestamp"} {
		if n := len(w.sessionsFor(as)); n != 0 {
			t.Fatalf("%d sessions stored for a refused delivery", n)
		}
	}

	w.ms.Push(modelserver.Step{Text: "only once"})
	body := w.fake.CreatedEvent(fakelinear.SessionEvent{SessionID: "as-again", Issue: w.issue})
	code, delivery := w.deliver(body, "")
	for range 2 {
		if again, _ := w.deliver(body, delivery); again != 200 || code != 200 {
			t.Fatalf("deliveries: %d then %d", code, again)
		}
	}
	id := w.session("as-again")
	w.waitActivity("as-again", "response: only once", patience)
	_, evs := w.srv.waitIdle(id)
	if n := count(evs, "user.message"); n != 1 {
		t.Fatalf("%d inputs for one delivery sent three times: %v", n, types(evs))
	}
	if n := countHolding(w.activities("as-again"), "response: "); n != 1 {
		t.Fatalf("%d responses", n)
	}
}
