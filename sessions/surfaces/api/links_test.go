package api_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestLinks: an admin links a key to a session and removes it (keys in a
// query parameter, for they hold / and #); the view lists the links; a
// key the policy forbids is a 403 with its message, a malformed one a 400
// naming the field, a key of another session a 409.
func TestLinks(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	c := e.session(t, agent, "")
	other := e.session(t, agent, "")
	var view struct {
		Links []core.Link `json:"links"`
	}
	code, raw := e.call(t, admin, "GET", "/v1/sessions/"+c.ID, nil)
	if _ = json.Unmarshal(raw, &view); code != 200 || view.Links == nil || len(view.Links) != 0 {
		t.Fatalf("a session without links shows %s", raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/sessions/"+c.ID+"/links", `{"key":"github:globex/app#7"}`)
	if _ = json.Unmarshal(raw, &view); code != 200 || len(view.Links) != 1 || view.Links[0].Key != "github:globex/app#7" || view.Links[0].AddedBy != "admin" {
		t.Fatalf("add: %d %s", code, raw)
	}
	for _, tt := range []struct {
		name, id, body string
		status         int
		typ, contains  string
	}{
		{"forbidden", c.ID, `{"key":"github:acme/app#7"}`, 403, "forbidden", "another customer's"},
		{"malformed", c.ID, `{"key":"github:globex"}`, 400, "invalid_request", `field "key"`},
		{"missing", c.ID, `{}`, 400, "invalid_request", `field "key" is required`},
		{"another session's", other.ID, `{"key":"github:globex/app#7"}`, 409, "conflict", "already routes to session " + c.ID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := e.call(t, admin, "POST", "/v1/sessions/"+tt.id+"/links", tt.body)
			wantError(t, code, raw, tt.status, tt.typ, tt.contains)
		})
	}
	if code, raw := e.call(t, c.ClientToken, "POST", "/v1/sessions/"+c.ID+"/links", `{"key":"github:globex/app#8"}`); code != 401 {
		t.Fatalf("a client token linked: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "DELETE", "/v1/sessions/"+c.ID+"/links?key="+url.QueryEscape("github:globex/app#7"), nil)
	if _ = json.Unmarshal(raw, &view); code != 200 || len(view.Links) != 0 {
		t.Fatalf("remove: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "DELETE", "/v1/sessions/"+c.ID+"/links?key="+url.QueryEscape("github:globex/app#7"), nil)
	wantError(t, code, raw, 404, "not_found", "no link")
	evs, err := e.store.Events(t.Context(), c.ID, 0, 0)
	if err != nil || len(evs) != 2 || evs[0].Type != core.TypeLinkAdded || evs[1].Type != core.TypeLinkRemoved {
		t.Fatalf("logged %+v (%v)", evs, err)
	}
}
