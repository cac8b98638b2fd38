package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// nulText is what a person may send that PostgreSQL's text cannot hold:
// U+0000, beside other control and non-BMP characters that JSON escapes.
const nulText = "Deploy\x00now \x01\x1f \U0001F680 \u2028 end"

// textMessage is a user.message whose body JSON-encodes text (message's
// %q would write Go escapes, which JSON does not read).
func textMessage(t *testing.T, text string) core.Event {
	t.Helper()
	b, err := json.Marshal(core.MessageBody{Text: text})
	must(t, err)
	return core.NewInput(core.TypeUserMessage, b)
}

// testMessageText: free text is kept as given, U+0000 included, at
// create, when queued (a steer) and once in the log, with metadata.
func testMessageText(t *testing.T, s core.Store) {
	ctx := t.Context()
	steer := "and\x00then"
	res, err := s.CreateSession(ctx, core.NewSession{
		Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Metadata: map[string]string{"note\x00": nulText}},
		Inputs:  []core.Event{textMessage(t, nulText)},
	})
	must(t, err)
	id := res.Session.ID
	_, err = s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{textMessage(t, steer)}})
	must(t, err)
	pending, err := s.Pending(ctx, id)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{nulText, steer}) {
		t.Fatalf("pending texts %q, want %q", got, []string{nulText, steer})
	}
	appendEvents(t, s, id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Events: []core.Event{turnStarted()}})
	logged, err := s.Events(ctx, id, 0, 0)
	must(t, err)
	var got []string
	for _, e := range logged {
		if e.Type == core.TypeUserMessage {
			got = append(got, textOf(t, e))
		}
	}
	if !slices.Equal(got, []string{nulText, steer}) {
		t.Fatalf("logged texts %q, want %q", got, []string{nulText, steer})
	}
	if m := getSession(t, s, id).Metadata; m["note\x00"] != nulText {
		t.Fatalf("metadata %q, want note\\x00 = %q", m, nulText)
	}
}

// testKeyText: an id, key, tenant or filter value that holds U+0000 or
// invalid UTF-8 is refused with ErrInvalid naming it, and writes nothing;
// a look-up by one finds nothing (ErrNotFound); a text filter reads U+0000 of a message as U+FFFD (record.SearchText)
// in both stores.
func testKeyText(t *testing.T, s core.Store) {
	ctx := t.Context()
	base := func() core.NewSession {
		return core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}}, Inputs: []core.Event{message("hello")}}
	}
	creates := []struct {
		name, field string
		edit        func(*core.NewSession)
	}{
		{"tenant with nul", "tenant", func(r *core.NewSession) { r.Session.Tenant = "acme\x00" }},
		{"tenant not utf8", "tenant", func(r *core.NewSession) { r.Session.Tenant = "acme\xff" }},
		{"external key", "external key", func(r *core.NewSession) {
			r.Session.Origin, r.ExternalKey = &core.Origin{Provider: "chat"}, "chat:T1:C\x001:1.2"
		}},
		{"dedupe key", "dedupe key", func(r *core.NewSession) { r.Dedupe = []string{"chat:event:Ev\x00"} }},
		{"idempotency key", "idempotency key", func(r *core.NewSession) { r.Idempotency = &core.Idempotency{Key: "api:sessions:\xfe", Hash: "h"} }},
	}
	for _, tc := range creates {
		t.Run("create/"+tc.name, func(t *testing.T) {
			req := base()
			tc.edit(&req)
			_, err := s.CreateSession(ctx, req)
			wantErr(t, err, core.ErrInvalid)
			if !strings.Contains(err.Error(), tc.field+" ") {
				t.Fatalf("error %q does not name %s", err, tc.field)
			}
		})
	}
	if all := allSessions(t, s, core.SessionFilter{}); len(all) != 0 {
		t.Fatalf("refused creates left %d sessions", len(all))
	}
	t.Run("queue/dedupe key", func(t *testing.T) {
		sess := newSession(t, s)
		_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("hi")}, Dedupe: []string{"d\x00"}})
		wantErr(t, err, core.ErrInvalid)
		if p, err := s.Pending(ctx, sess.ID); err != nil || len(p) != 0 {
			t.Fatalf("pending %d, %v after a refused queue", len(p), err)
		}
	})

	// A look-up by such text finds nothing: no record could hold it.
	for _, id := range []string{"ses_\x00", "ses_\xff"} {
		t.Run("lookup/"+strings.ToValidUTF8(strings.ReplaceAll(id, "\x00", "nul"), "invalid"), func(t *testing.T) {
			_, err := s.GetSession(ctx, id)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.SessionByKey(ctx, "chat:T1:C1:"+id)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.Events(ctx, id, 0, 0)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.Pending(ctx, id)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.GetAgent(ctx, id)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.GetAgentVersion(ctx, id, 1)
			wantErr(t, err, core.ErrNotFound)
			_, err = s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{message("hi")}})
			wantErr(t, err, core.ErrNotFound)
			_, err = s.Append(ctx, id, core.AppendRequest{Events: []core.Event{agentMessage("hi")}})
			wantErr(t, err, core.ErrNotFound)
		})
	}

	first, err := s.CreateSession(ctx, core.NewSession{
		Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Tenant: "acme"},
		Inputs:  []core.Event{textMessage(t, "Ship\x00It now")},
	})
	must(t, err)
	filters := []struct {
		name  string
		f     core.SessionFilter
		field string
		want  []string
	}{
		{"text across the nul", core.SessionFilter{Text: "shipit"}, "", nil},
		{"text beside the nul", core.SessionFilter{Text: "it NOW"}, "", []string{first.Session.ID}},
		{"text as the store reads the nul", core.SessionFilter{Text: "ship\uFFFDit"}, "", []string{first.Session.ID}},
		{"text with nul", core.SessionFilter{Text: "ship\x00it"}, "filter text", nil},
		{"text not utf8", core.SessionFilter{Text: "ship\xff"}, "filter text", nil},
		{"tenant with nul", core.SessionFilter{Tenant: "acme\x00"}, "filter tenant", nil},
		{"agent with nul", core.SessionFilter{AgentID: "agt_\x00"}, "filter agent", nil},
		{"origin key with nul", core.SessionFilter{OriginKey: "chat:\x00"}, "filter origin_key", nil},
		{"provider with nul", core.SessionFilter{Provider: "chat\x00"}, "filter provider", nil},
		{"after with nul", core.SessionFilter{After: "ses_\x00"}, "filter after", nil},
	}
	for _, tc := range filters {
		t.Run("list/"+tc.name, func(t *testing.T) {
			l, err := s.ListSessions(ctx, tc.f)
			if tc.field != "" {
				wantErr(t, err, core.ErrInvalid)
				if !strings.Contains(err.Error(), tc.field+" ") {
					t.Fatalf("error %q does not name %s", err, tc.field)
				}
				return
			}
			must(t, err)
			var got []string
			for _, sess := range l.Sessions {
				got = append(got, sess.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
		})
	}
}
