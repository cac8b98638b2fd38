package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestLinearRateLimitedOutputIsCoalescedNotLost is acceptance 4 (rate
// limits): while Linear answers RATELIMITED the turn goes on; afterwards
// every tool result and the response are there, and the thoughts logged
// meanwhile arrive as fewer activities than there were thoughts. The
// limit holds until the whole turn is logged, however long that takes.
func TestLinearRateLimitedOutputIsCoalescedNotLost(t *testing.T) {
	w := startLinear(t, nil)
	list := func(id string) []modelserver.ToolCall {
		return []modelserver.ToolCall{{ID: id, Name: "mcp_linear_list_teams"}}
	}
	w.ms.Push(
		modelserver.Step{Text: "idea one", ToolCalls: list("tu_1")},
		modelserver.Step{Text: "idea two", ToolCalls: list("tu_2")},
		modelserver.Step{Text: "idea three", ToolCalls: list("tu_3")},
		modelserver.Step{Text: "the answer after the storm"},
	)
	w.fake.HoldRateLimit()
	as := w.created("as-limited")
	id := w.session(as)
	w.srv.waitFor(id, "the turn logged while rate limited", func(_ sessionState, evs []event) bool { return count(evs, "turn.completed") == 1 })
	limited := func() int {
		n := 0
		for _, r := range w.fake.Requests() {
			if r.RateLimited {
				n++
			}
		}
		return n
	}
	w.fake.WaitFor(t, patience, "a call answered RATELIMITED", func() bool { return limited() > 0 })
	if got := w.activities(as); len(got) != 0 {
		t.Fatalf("activities shown while rate limited: %q", got)
	}
	w.fake.LiftRateLimit()
	w.waitActivity(as, "response: the answer after the storm", patience)
	w.srv.waitIdle(id)
	got := w.activities(as)
	thoughts := 0
	var text strings.Builder
	for _, a := range got {
		if body, ok := strings.CutPrefix(a, "thought: "); ok && !strings.Contains(body, "Looking into it") {
			thoughts++
			text.WriteString(body)
		}
	}
	for _, idea := range []string{"idea one", "idea two", "idea three"} {
		if !strings.Contains(text.String(), idea) {
			t.Fatalf("thought %q lost: %q", idea, got)
		}
	}
	if thoughts >= 3 {
		t.Fatalf("%d thought activities for 3 thoughts logged while rate limited: %q", thoughts, got)
	}
	if n := countHolding(got, "action: mcp_linear_list_teams → "); n != 3 {
		t.Fatalf("%d tool results shown: %q", n, got)
	}
	t.Logf("activities %q; %d calls answered RATELIMITED", got, limited())
}

// TestLinearResponseOnceAcrossSIGKILL is acceptance 4 (crash): serve is
// killed after the model answered and before the sink recorded the
// response; after the restart the response is on the agent session once.
func TestLinearResponseOnceAcrossSIGKILL(t *testing.T) {
	for _, park := range []string{"before_post", "after_post"} {
		t.Run(park, func(t *testing.T) {
			w := startLinear(t, map[string]string{"SWITCHBOARD_TEST_LINEAR_PARK": park})
			w.ms.Push(modelserver.Step{Text: "the one and only response"})
			as := w.created("as-crash-" + park)
			id := w.session(as)
			w.srv.waitFor(id, "the answer logged", func(_ sessionState, evs []event) bool { return count(evs, "agent.message") == 1 })
			responses := func() int { return countHolding(w.activities(as), "response: the one and only response") }
			if park == "after_post" {
				w.waitActivity(as, "response: the one and only response", patience)
			}
			w.srv.waitParked("linear " + park)
			if n := responses(); park == "before_post" && n != 0 {
				t.Fatalf("posted before the park point: %d", n)
			}
			w.srv.kill()
			delete(w.env, "SWITCHBOARD_TEST_LINEAR_PARK")
			w.srv = w.srv.restart()
			w.waitActivity(as, "response: the one and only response", patience)
			w.srv.waitIdle(id)
			// The sink renders a session's log in order: once the next
			// turn's response is shown, a second post of the first one
			// would have been made.
			w.ms.Push(modelserver.Step{Text: "a later response"})
			w.prompted(as, "and then?", "")
			w.waitActivity(as, "response: a later response", patience)
			if n := responses(); n != 1 {
				t.Fatalf("the response was posted %d times: %q", n, w.activities(as))
			}
		})
	}
}

// TestLinearTokensRefreshedAndRevoked is acceptance 5: access tokens
// near their expiry are renewed with the stored (rotating) refresh token
// before use, and only those; so is one Linear refuses; a revoked app
// leaves no tokens behind. Tokens are renewed 10 minutes before they
// expire, so tokens issued for 5 minutes are renewed at every use and an
// hour-long one is kept: no wall-clock expiry is waited for.
func TestLinearTokensRefreshedAndRevoked(t *testing.T) {
	w := startLinear(t, map[string]string{"LINEAR_TOKEN_REFRESH_SECONDS": "600"}, fakelinear.WithTokenTTL(5*time.Minute))
	if in := w.installation(); !in.HasToken || in.TokenExpiresAt == nil {
		t.Fatalf("installation %+v", in)
	}
	answer := func(as, text string) int {
		t.Helper()
		w.ms.Push(modelserver.Step{Text: text})
		w.created(as)
		w.waitActivity(as, "response: "+text, patience)
		w.srv.waitIdle(w.session(as))
		refreshed := 0
		for _, tok := range w.fake.TokensIssued() {
			if tok.Grant == "refresh_token" {
				refreshed++
			}
		}
		return refreshed
	}
	first := answer("as-tok-1", "first answer")
	if first == 0 {
		t.Fatalf("a token near its expiry was used without a refresh: %+v", w.fake.TokensIssued())
	}
	w.fake.SetTokenTTL(time.Hour)
	second := answer("as-tok-2", "second answer")
	third := answer("as-tok-2b", "answer with an hour-long token")
	if second <= first || third != second {
		t.Fatalf("refreshes: %d, then %d and %d with hour-long tokens: want one more, then none", first, second, third)
	}
	for _, r := range w.fake.Requests() {
		if r.Status == 401 {
			t.Fatalf("a call with an expired token: %+v", r)
		}
	}

	// Linear refuses the token before its expiry: renewed and retried.
	w.fake.ExpireAccessTokens()
	if answer("as-tok-3", "third answer") <= third {
		t.Fatal("the token Linear refused was not renewed")
	}
	refused := 0
	for _, r := range w.fake.Requests() {
		if r.Status == 401 {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the expired token was never refused: the retry path was not taken")
	}

	if code, _ := w.deliver(w.fake.RevokedEvent(), ""); code != 200 {
		t.Fatalf("revoked: %d", code)
	}
	if in := w.installation(); in.HasToken {
		t.Fatalf("tokens kept after the app was revoked: %+v", in)
	}
}
