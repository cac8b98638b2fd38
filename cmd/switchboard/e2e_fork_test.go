package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// messageTexts is a model request's conversation as role: text lines.
func messageTexts(req modelserver.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == core.BlockText {
				out = append(out, string(m.Role)+": "+b.Text)
			}
		}
	}
	return out
}

// TestForkAtSeq: a fork at the end of a session's first turn holds its log
// up to there: its first model request is that history and the new
// message, nothing of the second turn. It has its own client token, no
// usage, and names where it came from; a seq inside a turn is a 400.
func TestForkAtSeq(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ms.Push(modelserver.Step{Text: "Four."}, modelserver.Step{Text: "Six."}, modelserver.Step{Text: "Ten."})
	id := srv.createSession("What is 2+2?")
	_, evs := srv.waitIdle(id)
	var firstEnd uint64
	for _, e := range evs {
		if e.Type == "turn.completed" {
			firstEnd = e.Seq
		}
	}
	srv.send(id, "And 3+3?")
	srv.waitFor(id, "the second turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})

	code, raw := srv.do("POST", "/v1/sessions/"+id+"/fork", map[string]any{"at_seq": firstEnd - 1})
	if code != 400 || !strings.Contains(string(raw), `at_seq`) {
		t.Fatalf("fork inside a turn: %d %s", code, raw)
	}
	code, raw = srv.do("POST", "/v1/sessions/"+id+"/fork", map[string]any{"at_seq": firstEnd})
	if code != 201 {
		t.Fatalf("fork: %d %s", code, raw)
	}
	var fork struct {
		ID          string       `json:"id"`
		ClientToken string       `json:"client_token"`
		ForkedFrom  core.ForkRef `json:"forked_from"`
	}
	mustJSON(t, raw, &fork)
	if fork.ForkedFrom != (core.ForkRef{Session: id, Seq: firstEnd}) || fork.ClientToken == "" {
		t.Fatalf("fork answer %s", raw)
	}
	if code, _ := doReq(t, "GET", srv.url+"/v1/sessions/"+id, fork.ClientToken, nil); code != 404 {
		t.Fatalf("the fork's token reads its source: %d", code)
	}
	code, raw = doReq(t, "GET", srv.url+"/v1/sessions/"+fork.ID, fork.ClientToken, nil)
	var view struct {
		Usage      core.Usage    `json:"usage"`
		ForkedFrom *core.ForkRef `json:"forked_from"`
		Origin     any           `json:"origin"`
		LastSeq    uint64        `json:"last_seq"`
	}
	mustJSON(t, raw, &view)
	if code != 200 || view.Usage != (core.Usage{}) || view.ForkedFrom == nil || view.Origin != nil || view.LastSeq != firstEnd {
		t.Fatalf("the fork as its client sees it: %d %s", code, raw)
	}

	n := len(ms.Requests())
	if code, raw := doReq(t, "POST", srv.url+"/v1/sessions/"+fork.ID+"/events", fork.ClientToken,
		map[string]any{"events": []map[string]any{{"type": "user.message", "text": "And 5+5?"}}}); code != 202 {
		t.Fatalf("send to the fork: %d %s", code, raw)
	}
	srv.waitFor(fork.ID, "the fork's turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	reqs := ms.Requests()[n:]
	if len(reqs) != 1 {
		t.Fatalf("%d requests for the fork's turn", len(reqs))
	}
	got, want := messageTexts(reqs[0]), []string{"user: What is 2+2?", "assistant: Four.", "user: And 5+5?"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		b, _ := json.Marshal(reqs[0].Messages)
		t.Fatalf("the fork's first request holds %q, want %q\n%s", got, want, b)
	}
}
