package storetest

import (
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func platformSession(t *testing.T, s core.Store, key string, inputs ...core.Event) *core.Session {
	t.Helper()
	provider, err := core.KeyProvider(key)
	must(t, err)
	res, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1},
		Origin: &core.Origin{Provider: provider, Key: key}}, ExternalKey: key, Inputs: inputs})
	must(t, err)
	return res.Session
}

// testLinks: a link routes its key to the session (claim-or-create, by
// key, the origin_key filter), is logged when added and removed, and
// holds a key no other session has; bad keys are refused.
func testLinks(t *testing.T, s core.Store) {
	ctx := t.Context()
	const tracker, pr, other = "tracker:org1:as-1", "forge:acme/app#7", "forge:acme/app#8"
	sess := platformSession(t, s, tracker)
	const prURL = "https://forge.example/acme/app/pull/7"
	added, err := s.AddLink(ctx, sess.ID, core.LinkBody{Key: pr, By: core.LinkedByAgent, URL: prURL})
	must(t, err)
	if len(added.Links) != 1 || added.Links[0].Key != pr || added.Links[0].AddedBy != "agent" || added.Links[0].AddedAt.IsZero() || added.LastSeq != 1 {
		t.Fatalf("after the add %+v", added)
	}
	if read, err := s.GetSession(ctx, sess.ID); err != nil || len(read.Links) != 1 || read.Links[0].URL != prURL {
		t.Fatalf("read back %+v (%v): want the link with its url", read, err)
	}
	evs, err := s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	var b core.LinkBody
	if len(evs) != 1 || evs[0].Type != core.TypeLinkAdded || evs[0].Level != core.LevelInternal || evs[0].Decode(&b) != nil || b != (core.LinkBody{Key: pr, By: "agent", URL: prURL}) {
		t.Fatalf("logged %+v", evs)
	}
	// Again: nothing changes.
	again, err := s.AddLink(ctx, sess.ID, core.LinkBody{Key: pr, By: "admin"})
	must(t, err)
	if again.LastSeq != 1 || len(again.Links) != 1 {
		t.Fatalf("a second add of the same link %+v", again)
	}
	byKey, err := s.SessionByKey(ctx, pr)
	must(t, err)
	if byKey.ID != sess.ID {
		t.Fatalf("the link's key routes to %s", byKey.ID)
	}
	if got := allSessions(t, s, core.SessionFilter{OriginKey: pr}); len(got) != 1 || got[0].ID != sess.ID {
		t.Fatalf("origin_key=%s lists %d", pr, len(got))
	}
	// A trigger on the linked key steers the session.
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1},
		Origin: &core.Origin{Provider: "forge", Key: pr}}, ExternalKey: pr, Inputs: []core.Event{message("fix the nit")}})
	must(t, err)
	if res.Created || res.Session.ID != sess.ID {
		t.Fatalf("a trigger on the link %+v", res)
	}
	if p, _ := s.Pending(ctx, sess.ID); len(p) != 1 {
		t.Fatalf("%d inputs queued on the linked session", len(p))
	}
	// Keys held elsewhere are refused.
	b2 := platformSession(t, s, other)
	_, err = s.AddLink(ctx, sess.ID, core.LinkBody{Key: other, By: "admin"})
	wantErr(t, err, core.ErrConflict)
	_, err = s.AddLink(ctx, b2.ID, core.LinkBody{Key: pr, By: "admin"})
	wantErr(t, err, core.ErrConflict)
	// Its own origin routes to it already: nothing changes.
	own, err := s.AddLink(ctx, sess.ID, core.LinkBody{Key: tracker, By: "admin"})
	must(t, err)
	if len(own.Links) != 1 || own.LastSeq != 1 {
		t.Fatalf("linking the origin's own key %+v", own)
	}
	// The store knows the shape of every key; each platform's grammar is
	// its own (providers.Platform.Key), checked before a link reaches it.
	for _, bad := range []string{"", "forge", ":acme/app#7", "forge:", "Forge:acme/app#7", "forge:acme app#7", "forge:acme/app#7\n"} {
		_, err = s.AddLink(ctx, sess.ID, core.LinkBody{Key: bad, By: "admin"})
		wantErr(t, err, core.ErrInvalid)
	}
	_, err = s.AddLink(ctx, "ses_missing", core.LinkBody{Key: "forge:acme/app#9", By: "admin"})
	wantErr(t, err, core.ErrNotFound)

	removed, err := s.RemoveLink(ctx, sess.ID, pr, "admin")
	must(t, err)
	if len(removed.Links) != 0 {
		t.Fatalf("after the remove %+v", removed.Links)
	}
	_, err = s.SessionByKey(ctx, pr)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.RemoveLink(ctx, sess.ID, pr, "admin")
	wantErr(t, err, core.ErrNotFound)
	evs, err = s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	if last := evs[len(evs)-1]; last.Type != core.TypeLinkRemoved || last.Actor != core.ActorHuman {
		t.Fatalf("the remove logged %+v", last)
	}
	// Now free, the key starts a session of its own.
	fresh := platformSession(t, s, pr)
	if fresh.ID == sess.ID {
		t.Fatal("a removed link still routes")
	}
	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	_, err = s.AddLink(ctx, sess.ID, core.LinkBody{Key: "forge:acme/app#10", By: "admin"})
	wantErr(t, err, core.ErrArchived)
}

// testLinkRace: a link's add racing a trigger's create on the same key:
// the key routes to one session, whichever won.
func testLinkRace(t *testing.T, s core.Store) {
	ctx := t.Context()
	for i := range 10 {
		key := "forge:acme/race#" + string(rune('1'+i))
		sess := platformSession(t, s, "tracker:org1:race-"+string(rune('a'+i)))
		var wg sync.WaitGroup
		var linkErr error
		var created *core.CreateResult
		wg.Go(func() { _, linkErr = s.AddLink(ctx, sess.ID, core.LinkBody{Key: key, By: "agent"}) })
		wg.Go(func() {
			var err error
			created, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1},
				Origin: &core.Origin{Provider: "forge", Key: key}}, ExternalKey: key, Inputs: []core.Event{message("hi")}})
			if err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		owner, err := s.SessionByKey(ctx, key)
		must(t, err)
		switch {
		case linkErr == nil && (created.Session.ID != sess.ID || owner.ID != sess.ID):
			t.Fatalf("round %d: the link was added, but the trigger made %s and the key routes to %s", i, created.Session.ID, owner.ID)
		case linkErr != nil && (!created.Created || owner.ID != created.Session.ID):
			t.Fatalf("round %d: the link was refused (%v) but the trigger did not make the key's session", i, linkErr)
		}
	}
}
