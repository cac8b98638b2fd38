package main_test

import (
	"slices"
	"testing"
)

// TestLinearInstallAsAppAndDeleteRevokes: the install goes through
// Linear's consent page with actor=app (the fake refuses an install
// without it), and DELETE /v1/installations/{id} revokes the access token
// the install got at Linear (/oauth/revoke) before the installation is
// forgotten.
func TestLinearInstallAsAppAndDeleteRevokes(t *testing.T) {
	w := startLinear(t, nil)
	asks := w.fake.AuthorizeRequests()
	if len(asks) != 1 || asks[0].Get("actor") != "app" {
		t.Fatalf("authorize requests %v", asks)
	}
	var access string
	for _, tok := range w.fake.TokensIssued() {
		if tok.Grant == "authorization_code" {
			access = tok.Access
		}
	}
	in := w.installation()
	if access == "" || !in.HasToken {
		t.Fatalf("installed %+v with no token issued", in)
	}
	if code, raw := w.srv.do("DELETE", "/v1/installations/"+in.ID, nil); code != 204 {
		t.Fatalf("delete: %d %s", code, raw)
	}
	if got := w.fake.RevokeRequests(); !slices.Contains(got, access) {
		t.Fatalf("revoked %v, want the installation's access token", got)
	}
	for _, tok := range w.fake.TokensIssued() {
		if tok.Access == access && !tok.Revoked {
			t.Fatal("the access token still works at Linear")
		}
	}
	if code, _ := w.srv.do("GET", "/v1/installations/"+in.ID, nil); code != 404 {
		t.Fatalf("the deleted installation answers %d", code)
	}
}
