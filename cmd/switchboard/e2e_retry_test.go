package main_test

import (
	"strings"
	"testing"

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
