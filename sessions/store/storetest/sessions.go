package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func testCreateIdle(t *testing.T, s core.Store) {
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{
		Agent:           core.AgentRef{ID: "agt_x", Version: 3},
		Environment:     "env_1",
		ClientTokenHash: "h",
		// Projection fields belong to the store; these must be ignored.
		Status:  core.StatusRunning,
		LastSeq: 9,
		Usage:   core.Usage{InputTokens: 5},
		TurnID:  "turn_x",
	}})
	must(t, err)
	sess := res.Session
	if !res.Created || res.Duplicate || res.Replay != nil || len(res.Inputs) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if !core.HasPrefix(sess.ID, core.PrefixSession) || sess.Status != core.StatusIdle || sess.LastSeq != 0 ||
		sess.Usage.Total() != 0 || sess.TurnID != "" || sess.CreatedAt.IsZero() || !sess.UpdatedAt.Equal(sess.CreatedAt.Time) {
		t.Fatalf("session = %+v", sess)
	}
	if sess.Agent != (core.AgentRef{ID: "agt_x", Version: 3}) || sess.Environment != "env_1" || sess.ClientTokenHash != "h" {
		t.Fatalf("caller fields lost: %+v", sess)
	}
	if sess.Metadata == nil || len(sess.Metadata) != 0 || sess.Origin != nil {
		t.Fatalf("metadata = %#v, origin = %v", sess.Metadata, sess.Origin)
	}
	sameJSON(t, "stored session", getSession(t, s, sess.ID), sess)
	_, err = s.GetSession(ctx, "ses_missing")
	wantErr(t, err, core.ErrNotFound)
	if counts := checkCounts(t, s); counts[core.StatusIdle] != 1 {
		t.Fatalf("counts = %v", counts)
	}

	withMeta, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{ID: "ses_mine", Metadata: map[string]string{"k": "v"}}})
	must(t, err)
	if withMeta.Session.ID != "ses_mine" || withMeta.Session.Metadata["k"] != "v" {
		t.Fatalf("session = %+v", withMeta.Session)
	}
	_, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{ID: "ses_mine"}})
	wantErr(t, err, core.ErrConflict)
}

func testCreateQueued(t *testing.T, s core.Store) {
	ctx := t.Context()
	in := []core.Event{message("one"), message("two")}
	in[1].QueuedAt = nil
	res, err := s.CreateSession(ctx, core.NewSession{Inputs: in})
	must(t, err)
	if res.Session.Status != core.StatusQueued || len(res.Inputs) != 2 {
		t.Fatalf("result = %+v", res)
	}
	for i, e := range res.Inputs {
		if e.SessionID != res.Session.ID || e.Seq != 0 || e.QueuedAt == nil || e.ProcessedAt != nil || e.ID != in[i].ID || e.CreatedAt.IsZero() {
			t.Fatalf("input %d = %+v", i, e)
		}
	}
	pending, err := s.Pending(ctx, res.Session.ID)
	must(t, err)
	sameJSON(t, "pending", pending, res.Inputs)
	if counts := checkCounts(t, s); counts[core.StatusQueued] != 1 {
		t.Fatalf("counts = %v", counts)
	}
	_, err = s.Pending(ctx, "ses_missing")
	wantErr(t, err, core.ErrNotFound)
}

func testCreateInvalidInput(t *testing.T, s core.Store) {
	bad := agentMessage("not an input")
	_, err := s.CreateSession(t.Context(), core.NewSession{Inputs: []core.Event{message("ok"), bad}, ExternalKey: "k"})
	wantErr(t, err, core.ErrInvalid)
	if all := allSessions(t, s, core.SessionFilter{}); len(all) != 0 {
		t.Fatalf("a failed create stored %d sessions", len(all))
	}
	_, err = s.SessionByKey(t.Context(), "k")
	wantErr(t, err, core.ErrNotFound)
}

func testCreateExternalKey(t *testing.T, s core.Store) {
	ctx := t.Context()
	origin := &core.Origin{Provider: "chat", Key: "ignored", TenantID: "T1"}
	first, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Origin: origin, Tenant: "chat:T1"}, ExternalKey: "chat:T1:C1:1.0"})
	must(t, err)
	if !first.Created || first.Session.Status != core.StatusIdle || first.Session.Origin == nil ||
		first.Session.Origin.Key != "chat:T1:C1:1.0" || first.Session.Origin.TenantID != "T1" || first.Session.Tenant != "chat:T1" {
		t.Fatalf("first = %+v origin %+v", first, first.Session.Origin)
	}
	if origin.Key != "ignored" {
		t.Fatal("CreateSession mutated the caller's origin")
	}
	// A later trigger's tenant never changes the session's: it is fixed
	// at creation.
	second, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Origin: origin, Tenant: "chat:T9"}, ExternalKey: "chat:T1:C1:1.0", Inputs: []core.Event{message("hi")}})
	must(t, err)
	if second.Created || second.Session.ID != first.Session.ID || second.Session.Status != core.StatusQueued || len(second.Inputs) != 1 || second.Session.Tenant != "chat:T1" {
		t.Fatalf("second = %+v", second)
	}
	byKey, err := s.SessionByKey(ctx, "chat:T1:C1:1.0")
	must(t, err)
	sameJSON(t, "by key", byKey, second.Session)
	_, err = s.SessionByKey(ctx, "chat:nope")
	wantErr(t, err, core.ErrNotFound)
	checkCounts(t, s)
}

func testCreateExternalKeyArchived(t *testing.T, s core.Store) {
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{ExternalKey: "gh:o/r#1"})
	must(t, err)
	_, err = s.Archive(ctx, res.Session.ID)
	must(t, err)
	_, err = s.CreateSession(ctx, core.NewSession{ExternalKey: "gh:o/r#1", Inputs: []core.Event{message("x")}})
	wantErr(t, err, core.ErrArchived)
}

func testCreateIdempotency(t *testing.T, s core.Store) {
	ctx := t.Context()
	idem := &core.Idempotency{Key: "api:sessions:abc", Hash: "h1", Answer: []byte(`{"id":"ses_1"}`)}
	first, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{ID: "ses_1"}, Inputs: []core.Event{message("a")}, Idempotency: idem})
	must(t, err)
	if !first.Created || first.Replay != nil {
		t.Fatalf("first = %+v", first)
	}
	again, err := s.CreateSession(ctx, core.NewSession{Inputs: []core.Event{message("a")}, Idempotency: idem})
	must(t, err)
	if string(again.Replay) != `{"id":"ses_1"}` || again.Created {
		t.Fatalf("replay = %+v", again)
	}
	if n := len(allSessions(t, s, core.SessionFilter{})); n != 1 {
		t.Fatalf("replay created a session: %d sessions", n)
	}
	pending, err := s.Pending(ctx, "ses_1")
	must(t, err)
	if len(pending) != 1 {
		t.Fatalf("replay queued input: %d pending", len(pending))
	}
	other := *idem
	other.Hash = "h2"
	_, err = s.CreateSession(ctx, core.NewSession{Idempotency: &other})
	wantErr(t, err, core.ErrConflict)
	empty := &core.Idempotency{Key: "api:sessions:empty", Hash: "h"}
	_, err = s.CreateSession(ctx, core.NewSession{Idempotency: empty})
	must(t, err)
	replay, err := s.CreateSession(ctx, core.NewSession{Idempotency: empty})
	must(t, err)
	if replay.Replay == nil || replay.Created {
		t.Fatalf("an empty answer must still replay: %+v", replay)
	}
}

func testCreateDedupe(t *testing.T, s core.Store) {
	ctx := t.Context()
	first, err := s.CreateSession(ctx, core.NewSession{ExternalKey: "k", Dedupe: []string{"chat:Ev1"}, Inputs: []core.Event{message("a")}})
	must(t, err)
	dup, err := s.CreateSession(ctx, core.NewSession{ExternalKey: "k", Dedupe: []string{"chat:msg:C1:1.0", "chat:Ev1"}, Inputs: []core.Event{message("b")}})
	must(t, err)
	if !dup.Duplicate || dup.Created || len(dup.Inputs) != 0 {
		t.Fatalf("duplicate = %+v", dup)
	}
	pending, err := s.Pending(ctx, first.Session.ID)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("pending = %v", got)
	}
	// Nothing of the duplicate was written, not even its other key.
	third, err := s.CreateSession(ctx, core.NewSession{ExternalKey: "k", Dedupe: []string{"chat:msg:C1:1.0"}, Inputs: []core.Event{message("c")}})
	must(t, err)
	if third.Duplicate || third.Session.ID != first.Session.ID {
		t.Fatalf("third = %+v", third)
	}
	// A duplicate of a create without ExternalKey makes no session either.
	_, err = s.CreateSession(ctx, core.NewSession{Dedupe: []string{"gh:d1"}})
	must(t, err)
	dup2, err := s.CreateSession(ctx, core.NewSession{Dedupe: []string{"gh:d1"}})
	must(t, err)
	if !dup2.Duplicate {
		t.Fatalf("second delivery not deduped: %+v", dup2)
	}
	if n := len(allSessions(t, s, core.SessionFilter{})); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

func testCreateClaimRace(t *testing.T, s core.Store) {
	const n = 16
	results := make([]*core.CreateResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = s.CreateSession(t.Context(), core.NewSession{
				Session:     core.Session{Origin: &core.Origin{Provider: "chat"}},
				ExternalKey: "chat:T1:C1:race",
				Dedupe:      []string{fmt.Sprintf("ev%d", i)},
				Inputs:      []core.Event{message(fmt.Sprintf("m%d", i))},
			})
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		must(t, errs[i])
		if results[i].Session.ID != results[0].Session.ID {
			t.Fatalf("racers got sessions %s and %s", results[0].Session.ID, results[i].Session.ID)
		}
		if results[i].Created {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d racers created the session, want 1", created)
	}
	if all := allSessions(t, s, core.SessionFilter{}); len(all) != 1 {
		t.Fatalf("%d sessions, want 1", len(all))
	}
	pending, err := s.Pending(t.Context(), results[0].Session.ID)
	must(t, err)
	got := texts(t, pending)
	slices.Sort(got)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("m%d", i))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("pending = %v, want all %d inputs", got, n)
	}
	if counts := checkCounts(t, s); counts[core.StatusQueued] != 1 {
		t.Fatalf("counts = %v", counts)
	}
}

func testListSessions(t *testing.T, s core.Store) {
	ctx := t.Context()
	var made []*core.Session
	for i := range 5 {
		agent := "agt_b"
		if i < 2 {
			agent = "agt_a"
		}
		req := core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent, Version: 1}}}
		if i == 2 {
			req.Inputs = []core.Event{message("q")}
		}
		if i == 3 {
			req.ExternalKey = "tracker:issue:1"
		}
		res, err := s.CreateSession(ctx, req)
		must(t, err)
		made = append(made, res.Session)
	}
	want := sortedIDs(made, func(x *core.Session) string { return x.ID })
	var got []string
	after := ""
	for _, wantMore := range []bool{true, true, false} {
		page, err := s.ListSessions(ctx, core.SessionFilter{After: after, Limit: 2})
		must(t, err)
		if page.HasMore != wantMore {
			t.Fatalf("page after %q: hasMore %v, want %v", after, page.HasMore, wantMore)
		}
		for _, x := range page.Sessions {
			got = append(got, x.ID)
		}
		after = page.Sessions[len(page.Sessions)-1].ID
		if page.HasMore && page.Next != after {
			t.Fatalf("page after %q: next %q, want its last session %q", after, page.Next, after)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged = %v, want %v", got, want)
	}
	count := func(f core.SessionFilter) int { return len(allSessions(t, s, f)) }
	if n := count(core.SessionFilter{}); n != 5 {
		t.Fatalf("default limit listed %d", n)
	}
	if n := count(core.SessionFilter{Status: core.StatusQueued}); n != 1 {
		t.Fatalf("status filter listed %d", n)
	}
	if n := count(core.SessionFilter{Status: core.StatusIdle, Limit: 1}); n != 4 {
		t.Fatalf("status filter with paging listed %d", n)
	}
	if n := count(core.SessionFilter{AgentID: "agt_a"}); n != 2 {
		t.Fatalf("agent filter listed %d", n)
	}
	byKey := allSessions(t, s, core.SessionFilter{OriginKey: "tracker:issue:1"})
	if len(byKey) != 1 || byKey[0].ID != made[3].ID {
		t.Fatalf("origin key filter = %v", byKey)
	}
	if n := count(core.SessionFilter{OriginKey: "tracker:issue:1", AgentID: "agt_a"}); n != 0 {
		t.Fatalf("origin key + other agent listed %d", n)
	}
	if n := count(core.SessionFilter{OriginKey: "tracker:none"}); n != 0 {
		t.Fatalf("unknown origin key listed %d", n)
	}
}
