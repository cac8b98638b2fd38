package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestRetryOverAPI: after a model error fails a turn, user.retry runs it
// again: the model's next request holds the same input and the error,
// the answer is logged once, and the session's result is the new
// answer. A retry with nothing to retry is refused with 409.
func TestRetryOverAPI(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))

	ms.Push(modelserver.Step{Status: 401, ErrorMessage: "invalid x-api-key"})
	id := srv.createSession("summarise the incident")
	srv.waitFor(id, "the failed turn", func(st sessionState, _ []event) bool { return st.Status == "failed" })
	var failed struct {
		Result struct {
			TurnID      string `json:"turn_id"`
			YieldReason string `json:"yield_reason"`
		} `json:"result"`
	}
	_, raw := srv.do("GET", "/v1/sessions/"+id, nil)
	mustJSON(t, raw, &failed)
	if failed.Result.YieldReason != "error" {
		t.Fatalf("result after the failure: %s", raw)
	}

	// Another turn than the last is refused, and so is an unknown field.
	if code, raw := srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.retry", "turn_id": "turn_older"}}}); code != 409 ||
		!strings.Contains(string(raw), "not the last finished turn") {
		t.Fatalf("retry of another turn: %d %s", code, raw)
	}
	if code, raw := srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.retry", "text": "x"}}}); code != 400 ||
		!strings.Contains(string(raw), `unknown field \"text\" for user.retry`) {
		t.Fatalf("retry with text: %d %s", code, raw)
	}

	ms.Push(modelserver.Step{Text: "The incident is summarised."})
	n := len(ms.Requests())
	srv.post(id, map[string]any{"type": "user.retry"})
	st, evs := srv.waitIdle(id)
	if st.StopReason == nil || *st.StopReason != "completed" {
		t.Fatalf("after the retry: %+v", st)
	}
	reqs := ms.Requests()[n:]
	if len(reqs) != 1 {
		t.Fatalf("%d model requests for the retry, want 1", len(reqs))
	}
	msgs := reqs[0].Messages
	if len(msgs) != 1 || msgs[0].Content[0].Text != "summarise the incident" ||
		!strings.Contains(msgs[0].Content[len(msgs[0].Content)-1].Text, "invalid x-api-key") {
		t.Fatalf("the retried request: %+v", msgs)
	}
	var retries, answers int
	for _, e := range evs {
		switch {
		case e.Type == "user.retry":
			retries++
			if !strings.Contains(string(e.Body), `"turn_id":"`+failed.Result.TurnID+`"`) {
				t.Fatalf("user.retry body %s does not name the failed turn %s", e.Body, failed.Result.TurnID)
			}
		case e.Type == "agent.message" && strings.Contains(string(e.Body), "The incident is summarised."):
			answers++
		}
	}
	if retries != 1 || answers != 1 {
		t.Fatalf("%d retries and %d answers logged, want one each: %v", retries, answers, types(evs))
	}
	if out := srv.result(id); out.YieldReason != "completed" || out.Text != "The incident is summarised." {
		t.Fatalf("result after the retry: %+v", out)
	}
	// The last turn completed: nothing to retry.
	if code, raw := srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.retry"}}}); code != 409 ||
		!strings.Contains(string(raw), "ended completed") {
		t.Fatalf("retry after a completed turn: %d %s", code, raw)
	}
}

type turnResult struct {
	TurnID      string `json:"turn_id"`
	YieldReason string `json:"yield_reason"`
	Text        string `json:"text"`
}

// result is the session's result (zero before a turn finished).
func (s *server) result(id string) turnResult {
	s.t.Helper()
	var v struct {
		Result *turnResult `json:"result"`
	}
	_, raw := s.do("GET", "/v1/sessions/"+id, nil)
	mustJSON(s.t, raw, &v)
	if v.Result == nil {
		return turnResult{}
	}
	return *v.Result
}

// TestRetryFromSlack: a model error in a Slack thread posts the error
// with a Retry button; a click runs the turn again with the same input,
// its answer is posted once, and the button is replaced by who retried.
// A second click on the same button queues nothing.
func TestRetryFromSlack(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0RT1", Name: "Retry"}, nil)
	w.ms.Push(modelserver.Step{Status: 401, ErrorMessage: "invalid x-api-key"})
	m := w.fake.Human(w.team.ID, "C0RETRY", "U0ALICE", "<@"+w.team.BotUserID+"> draft the release notes", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	failure := w.waitReply(w.team, "C0RETRY", m.TS, "I ran into an error")
	id := w.session(w.team.ID, "C0RETRY", m.TS)
	w.srv.waitFor(id, "the failed turn", func(st sessionState, _ []event) bool { return st.Status == "failed" })

	w.ms.Push(modelserver.Step{Text: "Here are the release notes."})
	n := len(w.ms.Requests())
	if code := w.click(w.team, "U0BOB", failure, "sb_retry"); code != 200 {
		t.Fatalf("click: %d", code)
	}
	st, evs := w.srv.waitIdle(id)
	if st.StopReason == nil || *st.StopReason != "completed" || count(evs, "user.retry") != 1 {
		t.Fatalf("after Retry: %+v, log %v", st, types(evs))
	}
	if reqs := w.ms.Requests()[n:]; len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Content[0].Text, "draft the release notes") {
		t.Fatalf("the retried request: %d requests %+v", len(reqs), reqs)
	}
	w.waitReply(w.team, "C0RETRY", m.TS, "Here are the release notes.")
	// The error's button is replaced by who retried.
	waitUntil(t, "the Retry button replaced", func() bool {
		for _, msg := range w.fake.Thread("C0RETRY", m.TS) {
			if msg.TS == failure.TS {
				return strings.Contains(string(msg.Blocks), `Retried by \u003c@U0BOB\u003e`) && !strings.Contains(string(msg.Blocks), "sb_retry")
			}
		}
		return false
	})

	// The same click again (or Slack retrying it) queues nothing.
	if code := w.click(w.team, "U0BOB", failure, "sb_retry"); code != 200 {
		t.Fatalf("second click: %d", code)
	}
	w.ms.Push(modelserver.Step{Text: "a second answer nobody asked for"})
	if _, raw := w.srv.do("GET", "/v1/sessions/"+id+"/pending", nil); strings.Contains(string(raw), `"id"`) {
		t.Fatalf("the second click queued %s", raw)
	}
	if got := w.botReplies(w.team, "C0RETRY", m.TS, "Here are the release notes."); len(got) != 1 {
		t.Fatalf("the answer was posted %d times", len(got))
	}
}
