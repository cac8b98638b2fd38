package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// newAttachToken makes an attach token of session id for person.
func (e *apiEnv) newAttachToken(t *testing.T, id, person string) api.AttachTokenView {
	t.Helper()
	code, raw := e.call(t, admin, "POST", "/v1/sessions/"+id+"/attach_tokens", map[string]any{"person": person})
	if code != 201 {
		t.Fatalf("create attach token: %d %s", code, raw)
	}
	var v api.AttachTokenView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAttachTokenCreateListRevoke: the secret is shown once; lists show
// the tokens without it or its hash; a revoke is shown; bad input and
// other tokens are refused.
func TestAttachTokenCreateListRevoke(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	tok := e.newAttachToken(t, s.ID, "Ada Lovelace")
	if sid, ok := api.TokenSession(tok.Token); !ok || sid != s.ID || !strings.HasPrefix(tok.ID, "atk_") || tok.Person != "Ada Lovelace" || tok.IssuedBy != "admin" || tok.RevokedAt != nil {
		t.Fatalf("created %+v", tok)
	}
	code, raw := e.call(t, admin, "GET", "/v1/sessions/"+s.ID+"/attach_tokens", nil)
	if code != 200 || strings.Contains(string(raw), tok.Token) || strings.Contains(string(raw), "hash") || !strings.Contains(string(raw), `"person":"Ada Lovelace"`) {
		t.Fatalf("list: %d %s", code, raw)
	}
	for name, tc := range map[string]struct {
		token, method, path string
		body                any
		status              int
		typ, says           string
	}{
		"no person":          {admin, "POST", "/v1/sessions/" + s.ID + "/attach_tokens", map[string]any{"person": " "}, 400, "invalid_request", "person"},
		"unknown field":      {admin, "POST", "/v1/sessions/" + s.ID + "/attach_tokens", map[string]any{"person": "Ada", "admin": true}, 400, "invalid_request", "admin"},
		"unknown session":    {admin, "POST", "/v1/sessions/ses_00000000000000000000000000/attach_tokens", map[string]any{"person": "Ada"}, 404, "not_found", "ses_"},
		"client token mints": {s.ClientToken, "POST", "/v1/sessions/" + s.ID + "/attach_tokens", map[string]any{"person": "Ada"}, 401, "unauthorized", "admin token"},
		"attach token mints": {tok.Token, "POST", "/v1/sessions/" + s.ID + "/attach_tokens", map[string]any{"person": "Ada"}, 403, "forbidden", "own session"},
		"attach token lists": {tok.Token, "GET", "/v1/sessions/" + s.ID + "/attach_tokens", nil, 403, "forbidden", "own session"},
		"unknown token":      {admin, "DELETE", "/v1/sessions/" + s.ID + "/attach_tokens/atk_00000000000000000000000000", nil, 404, "not_found", "atk_"},
		"a forged secret":    {tok.Token[:len(tok.Token)-4] + "0000", "GET", "/v1/sessions/" + s.ID, nil, 401, "unauthorized", "invalid token"},
		"another session's":  {strings.Replace(tok.Token, s.ID, "ses_00000000000000000000000000", 1), "GET", "/v1/sessions/" + s.ID, nil, 401, "unauthorized", "invalid token"},
	} {
		t.Run(name, func(t *testing.T) {
			code, raw := e.call(t, tc.token, tc.method, tc.path, tc.body)
			wantError(t, code, raw, tc.status, tc.typ, tc.says)
		})
	}
	code, raw = e.call(t, admin, "DELETE", "/v1/sessions/"+s.ID+"/attach_tokens/"+tok.ID, nil)
	var revoked api.AttachTokenView
	if code != 200 || json.Unmarshal(raw, &revoked) != nil || revoked.RevokedAt == nil || revoked.RevokedBy != "admin" || revoked.Token != "" {
		t.Fatalf("revoke: %d %s", code, raw)
	}
}

// TestAttachTokenScope: an attach token reads and steers its own session
// (its inputs signed with the person's name), is refused everywhere else
// with a 403, and with a 401 that says so once revoked.
func TestAttachTokenScope(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	s, other := e.session(t, agent, ""), e.session(t, agent, "")
	tok := e.newAttachToken(t, s.ID, "Ada Lovelace")
	for name, tc := range map[string]struct {
		method, path string
		body         any
		status       int
	}{
		"read":         {"GET", "/v1/sessions/" + s.ID, nil, 200},
		"events":       {"GET", "/v1/sessions/" + s.ID + "/events", nil, 200},
		"pending":      {"GET", "/v1/sessions/" + s.ID + "/pending", nil, 200},
		"message":      {"POST", "/v1/sessions/" + s.ID + "/events", map[string]any{"events": []any{map[string]any{"type": "user.message", "text": "from my editor"}}}, 202},
		"interrupt":    {"POST", "/v1/sessions/" + s.ID + "/events", map[string]any{"events": []any{map[string]any{"type": "user.interrupt"}}}, 202},
		"other read":   {"GET", "/v1/sessions/" + other.ID, nil, 403},
		"other events": {"GET", "/v1/sessions/" + other.ID + "/events", nil, 403},
		"other post":   {"POST", "/v1/sessions/" + other.ID + "/events", map[string]any{"events": []any{map[string]any{"type": "user.message", "text": "x"}}}, 403},
		"list":         {"GET", "/v1/sessions", nil, 403},
		"create":       {"POST", "/v1/sessions", map[string]any{"agent": agent}, 403},
		"agents":       {"GET", "/v1/agents", nil, 403},
		"archive":      {"POST", "/v1/sessions/" + s.ID + "/archive", nil, 403},
		"wake":         {"POST", "/v1/sessions/" + s.ID + "/wake", nil, 403},
	} {
		t.Run(name, func(t *testing.T) {
			code, raw := e.call(t, tok.Token, tc.method, tc.path, tc.body)
			if code != tc.status {
				t.Fatalf("%d %s, want %d", code, raw, tc.status)
			}
			if code == 403 {
				wantError(t, code, raw, 403, "forbidden", "its own session")
			}
		})
	}
	pending, err := e.store.Pending(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 {
		t.Fatalf("queued %+v: want the message and the interrupt", pending)
	}
	for _, in := range pending {
		var b core.MessageBody // the fields every signed input has
		if in.Decode(&b) != nil || b.Via != "editor" || b.By != "Ada Lovelace" || b.AttachToken != tok.ID ||
			(in.Type == core.TypeUserMessage && b.Text != "from my editor") {
			t.Fatalf("queued %s %s: want it signed by Ada", in.Type, in.Body)
		}
	}
	// The use is recorded.
	if got, err := e.store.GetAttachToken(t.Context(), tok.ID); err != nil || got.LastUsedAt == nil {
		t.Fatalf("after use %+v (%v)", got, err)
	}
	code, raw := e.call(t, admin, "DELETE", "/v1/sessions/"+s.ID+"/attach_tokens/"+tok.ID, nil)
	if code != 200 {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	for _, path := range []string{"/v1/sessions/" + s.ID, "/v1/sessions/" + s.ID + "/events"} {
		code, raw := e.call(t, tok.Token, "GET", path, nil)
		wantError(t, code, raw, 401, "unauthorized", "attach token "+tok.ID+" was revoked")
	}
	// Another person's token of the session still works.
	grace := e.newAttachToken(t, s.ID, "Grace Hopper")
	if code, raw := e.call(t, grace.Token, "GET", "/v1/sessions/"+s.ID, nil); code != 200 {
		t.Fatalf("another token after the revoke: %d %s", code, raw)
	}
}

// TestAttachTokenRevokeEndsStream: a stream an attach token opened ends
// when the token is revoked, and does not reconnect; a stream of another
// token of the session goes on.
func TestAttachTokenRevokeEndsStream(t *testing.T) {
	e := newAPIHeartbeat(t, time.Hour)
	s := e.session(t, e.agent(t), "")
	ada, grace := e.newAttachToken(t, s.ID, "Ada"), e.newAttachToken(t, s.ID, "Grace")
	adaStream := openSSE(t, e, ada.Token, "/v1/sessions/"+s.ID+"/events?level=user")
	defer adaStream.close()
	graceStream := openSSE(t, e, grace.Token, "/v1/sessions/"+s.ID+"/events?level=user")
	defer graceStream.close()
	e.appendEvents(t, s.ID, 1) // seq 3: after the two tokens' creation
	adaStream.expect(t, 3, 3)
	graceStream.expect(t, 3, 3)
	if code, raw := e.call(t, admin, "DELETE", "/v1/sessions/"+s.ID+"/attach_tokens/"+ada.ID, nil); code != 200 {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	ended := make(chan error, 1)
	go func() {
		ev, err := adaStream.next()
		if err == nil {
			err = fmt.Errorf("sent %+v", ev)
		}
		ended <- err
	}()
	select {
	case err := <-ended:
		if err.Error() != "stream ended" {
			t.Fatalf("after the revoke the stream: %v; want its end", err)
		}
	case <-time.After(30 * time.Second): // a fail-safe ceiling, not a measure
		adaStream.close()
		t.Fatal("the stream is still open 30 s after its token was revoked")
	}
	if adaStream.comments == 0 {
		t.Fatal("the stream ended without saying why")
	}
	e.appendEvents(t, s.ID, 1) // seq 5
	graceStream.expect(t, 5, 5)
}

// TestAttachTokenRevokeEndsStreamUnlogged: a revoke the log does not tell
// (the session is archived, its log closed) still ends the token's
// stream, at its next heartbeat.
func TestAttachTokenRevokeEndsStreamUnlogged(t *testing.T) {
	e := newAPIHeartbeat(t, 5*time.Millisecond)
	s := e.session(t, e.agent(t), "")
	ada := e.newAttachToken(t, s.ID, "Ada")
	stream := openSSE(t, e, ada.Token, "/v1/sessions/"+s.ID+"/events")
	defer stream.close()
	if code, raw := e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/archive", nil); code != 200 {
		t.Fatalf("archive: %d %s", code, raw)
	}
	if code, raw := e.call(t, admin, "DELETE", "/v1/sessions/"+s.ID+"/attach_tokens/"+ada.ID, nil); code != 200 {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			ev, err := stream.next()
			if err != nil {
				ended <- err
				return
			}
			if ev.typ == core.TypeAttachTokenRevoked {
				ended <- fmt.Errorf("the archived session logged %+v", ev)
				return
			}
		}
	}()
	select {
	case err := <-ended:
		if err.Error() != "stream ended" {
			t.Fatalf("after the revoke the stream: %v; want its end", err)
		}
	case <-time.After(30 * time.Second): // a fail-safe ceiling, not a measure
		stream.close()
		t.Fatal("the stream is still open 30 s after its token was revoked")
	}
}

// TestEventsAfterPastEnd: a seq past the session's last event is refused
// with a 400 naming it, as a page and as a stream (?after= or
// Last-Event-ID), so no resumed stream skips what is logged until the
// log reaches it; the last seq itself is fine.
func TestEventsAfterPastEnd(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	ada := e.newAttachToken(t, s.ID, "Ada")
	got, err := e.store.GetSession(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := got.LastSeq
	for name, tc := range map[string]struct {
		token, query string
		hdr          []string
		says         string
	}{
		"page":           {admin, fmt.Sprint("?after=", last+1), nil, "after"},
		"stream after":   {ada.Token, fmt.Sprint("?after=", last+5), []string{"Accept", "text/event-stream"}, "after"},
		"Last-Event-ID":  {ada.Token, "", []string{"Accept", "text/event-stream", "Last-Event-ID", fmt.Sprint(last + 1)}, "Last-Event-ID"},
		"admin stream":   {admin, "", []string{"Accept", "text/event-stream", "Last-Event-ID", "1000"}, "Last-Event-ID"},
		"last seq":       {admin, fmt.Sprint("?after=", last), nil, ""},
		"last seq token": {ada.Token, fmt.Sprint("?after=", last), nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.srv.URL+"/v1/sessions/"+s.ID+"/events"+tc.query, nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if tc.says == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, raw)
				}
				return
			}
			wantError(t, resp.StatusCode, raw, 400, "invalid_request", tc.says+" ")
		})
	}
}
