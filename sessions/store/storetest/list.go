package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// listFixture is a session of the filter tests: its id orders it.
type listFixture struct {
	id, provider, tenant, agent string
	// batches are queued one after the other: the first at create.
	batches [][]core.Event
}

func createFixtures(t *testing.T, s core.Store, fixtures []listFixture) {
	t.Helper()
	for _, fx := range fixtures {
		req := core.NewSession{Session: core.Session{ID: fx.id, Agent: core.AgentRef{ID: fx.agent, Version: 1}, Tenant: fx.tenant}}
		if fx.provider != "" {
			key := fx.provider + ":" + fx.id
			req.Session.Origin = &core.Origin{Provider: fx.provider, Key: key}
			req.ExternalKey = key
		}
		if len(fx.batches) > 0 {
			req.Inputs = fx.batches[0]
		}
		_, err := s.CreateSession(t.Context(), req)
		must(t, err)
		for _, b := range fx.batches[min(1, len(fx.batches)):] {
			_, err := s.QueueInputs(t.Context(), fx.id, core.QueueRequest{Inputs: b})
			must(t, err)
		}
	}
}

func testListFilters(t *testing.T, s core.Store) {
	in := func(e ...core.Event) []core.Event { return e }
	createFixtures(t, s, []listFixture{
		{id: "ses_f00", provider: "chat", tenant: "chat:T1", agent: "agt_a", batches: [][]core.Event{in(message("Deploy the API"))}},
		{id: "ses_f01", provider: "chat", tenant: "chat:T2", agent: "agt_b"},
		{id: "ses_f02", provider: "forge", tenant: "forge:o/r", agent: "agt_a", batches: [][]core.Event{in(message("fix the BUG"), message("deploy it too"))}},
		{id: "ses_f03", tenant: "customer:acme", agent: "agt_a"},
		// Only its second message speaks of deploying.
		{id: "ses_f04", provider: "tracker", tenant: "tracker:org", agent: "agt_b", batches: [][]core.Event{in(message("hello")), in(message("deploy later"))}},
		// Its first user message comes after an interrupt.
		{id: "ses_f05", provider: "chat", tenant: "chat:T1", agent: "agt_b", batches: [][]core.Event{in(interrupt()), in(message("DEPLOY now")), in(message("bug"))}},
		{id: "ses_f06", agent: "agt_a"},
		// The text past the bytes a store keeps is not searched.
		{id: "ses_f07", provider: "forge", tenant: "forge:o/r", agent: "agt_b", batches: [][]core.Event{in(message("head " + strings.Repeat("x", core.MaxFirstText) + " tail"))}},
	})
	tests := []struct {
		name string
		f    core.SessionFilter
		want []string
	}{
		{"provider", core.SessionFilter{Provider: "chat"}, []string{"ses_f00", "ses_f01", "ses_f05"}},
		{"provider api: no origin", core.SessionFilter{Provider: core.ProviderAPI}, []string{"ses_f03", "ses_f06"}},
		{"provider unknown", core.SessionFilter{Provider: "jira"}, nil},
		{"tenant", core.SessionFilter{Tenant: "chat:T1"}, []string{"ses_f00", "ses_f05"}},
		{"tenant and status", core.SessionFilter{Tenant: "chat:T2", Status: core.StatusIdle}, []string{"ses_f01"}},
		{"tenant and other status", core.SessionFilter{Tenant: "chat:T2", Status: core.StatusQueued}, nil},
		{"provider and agent", core.SessionFilter{Provider: "chat", AgentID: "agt_b"}, []string{"ses_f01", "ses_f05"}},
		{"provider, tenant and agent", core.SessionFilter{Provider: "chat", Tenant: "chat:T1", AgentID: "agt_a"}, []string{"ses_f00"}},
		{"provider and tenant of another", core.SessionFilter{Provider: "forge", Tenant: "chat:T1"}, nil},
		{"provider and origin key", core.SessionFilter{Provider: "tracker", OriginKey: "tracker:ses_f04"}, []string{"ses_f04"}},
		{"other provider and origin key", core.SessionFilter{Provider: "chat", OriginKey: "tracker:ses_f04"}, nil},
		{"text", core.SessionFilter{Text: "deploy"}, []string{"ses_f00", "ses_f05"}},
		{"text ignores case", core.SessionFilter{Text: "DePlOy ThE"}, []string{"ses_f00"}},
		{"text of the first message only", core.SessionFilter{Text: "bug"}, []string{"ses_f02"}},
		{"text of a second message", core.SessionFilter{Text: "later"}, nil},
		{"text within the kept bytes", core.SessionFilter{Text: "head xx"}, []string{"ses_f07"}},
		{"text past the kept bytes", core.SessionFilter{Text: "tail"}, nil},
		{"text, provider and status", core.SessionFilter{Text: "deploy", Provider: "chat", Status: core.StatusQueued}, []string{"ses_f00", "ses_f05"}},
		{"text and agent", core.SessionFilter{Text: "deploy", AgentID: "agt_b"}, []string{"ses_f05"}},
		{"text and tenant", core.SessionFilter{Text: "deploy", Tenant: "chat:T2"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, limit := range []int{0, 1, 2} {
				f := tc.f
				f.Limit = limit
				var got []string
				for _, sess := range allSessions(t, s, f) {
					got = append(got, sess.ID)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("limit %d: listed %v, want %v", limit, got, tc.want)
				}
			}
		})
	}
	// A list shows each session's first message without reading logs,
	// whichever filter (or none) chose the page.
	firsts := map[string]string{
		"ses_f00": "Deploy the API", "ses_f01": "", "ses_f02": "fix the BUG", "ses_f04": "hello", "ses_f05": "DEPLOY now",
		"ses_f07": "head " + strings.Repeat("x", core.MaxFirstText-len("head ")),
	}
	for _, f := range []core.SessionFilter{{}, {Text: "e"}, {AgentID: "agt_b"}, {Provider: "chat"}, {OriginKey: "forge:ses_f02"}} {
		for _, sess := range allSessions(t, s, f) {
			if want, ok := firsts[sess.ID]; ok && sess.FirstText != want {
				t.Fatalf("filter %+v: %s's first text %q, want %q", f, sess.ID, sess.FirstText, want)
			}
		}
	}
}

// testListTextCap holds a text filter to MaxExamined sessions a page:
// the page says where it stopped, and going on from there finds the
// matches further on.
func testListTextCap(t *testing.T, s core.Store) {
	var fixtures []listFixture
	for i := range 12 {
		text := "hay"
		if i == 2 || i == 9 {
			text = "a Needle here"
		}
		fixtures = append(fixtures, listFixture{id: fmt.Sprintf("ses_t%02d", i), agent: "agt_a", batches: [][]core.Event{{message(text)}}})
	}
	createFixtures(t, s, fixtures)
	type page struct {
		after  string
		limit  int
		got    []string
		more   bool
		capped bool
		next   string
	}
	tests := []struct {
		name  string
		pages []page
	}{
		{"pages stop at the cap", []page{
			{after: "", limit: 10, got: []string{"ses_t02"}, more: true, capped: true, next: "ses_t04"},
			{after: "ses_t04", limit: 10, got: []string{"ses_t09"}, more: true, capped: true, next: "ses_t09"},
			{after: "ses_t09", limit: 10},
		}},
		{"a full page is not capped", []page{
			{after: "", limit: 1, got: []string{"ses_t02"}, more: true, next: "ses_t02"},
			{after: "ses_t02", limit: 1, more: true, capped: true, next: "ses_t07"},
			{after: "ses_t07", limit: 1, got: []string{"ses_t09"}},
		}},
		{"the cap reaching the last session", []page{
			{after: "ses_t06", limit: 10, got: []string{"ses_t09"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.pages {
				l, err := s.ListSessions(t.Context(), core.SessionFilter{Text: "NEEDLE", MaxExamined: 5, After: p.after, Limit: p.limit})
				must(t, err)
				var got []string
				for _, sess := range l.Sessions {
					got = append(got, sess.ID)
				}
				if !slices.Equal(got, p.got) || l.HasMore != p.more || l.Capped != p.capped || l.Next != p.next {
					t.Fatalf("after %q: %v more %v capped %v next %q; want %v more %v capped %v next %q",
						p.after, got, l.HasMore, l.Capped, l.Next, p.got, p.more, p.capped, p.next)
				}
			}
		})
	}
	// Without a cap of its own, a text filter reads far more.
	all := allSessions(t, s, core.SessionFilter{Text: "needle"})
	if len(all) != 2 || all[0].ID != "ses_t02" || all[1].ID != "ses_t09" {
		t.Fatalf("default cap listed %d sessions", len(all))
	}
}
