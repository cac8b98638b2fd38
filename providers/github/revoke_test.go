package github

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/installations"
)

// TestDeleteRevokesTheInstallationToken: DELETE /v1/installations/{id} of
// a GitHub installation (which stores no tokens) revokes the installation
// token the gateway holds at GitHub and the repository tokens made for
// git, drops the clients, and forgets the record.
func TestDeleteRevokesTheInstallationToken(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	if code := r.deliver("issue_comment", mention(960, 8, 31, "@sb-agent look")); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	in := r.installation(960)
	if in == nil || in.HasToken {
		t.Fatalf("installation %+v", in)
	}
	// The mention's permission check made the REST client's token; git
	// gets one of its own.
	if _, _, err := r.p.GitHeader(t.Context(), gitCredentialPrefix+"960:acme/widgets", r.p.gitHostPort()); err != nil {
		t.Fatal(err)
	}
	issued := r.fake.IssuedTokens()
	if len(issued) != 2 {
		t.Fatalf("%d tokens issued, want the client's and git's", len(issued))
	}

	mux := http.NewServeMux()
	(&installations.Handler{Store: r.store, Agents: r.store, Revokers: map[string]providers.Revoker{Name: r.p}}).Register(mux)
	req := httptest.NewRequest(http.MethodDelete, "/v1/installations/"+in.ID, nil)
	req = req.WithContext(core.WithPrincipal(req.Context(), core.Principal{Admin: true}))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	revoked := r.fake.Revoked()
	if len(revoked) != 2 {
		t.Fatalf("revoked %+v, want both tokens", revoked)
	}
	for _, rv := range revoked {
		if _, ok := issued[rv.Token]; !ok || rv.Installation != 960 {
			t.Fatalf("revoked %+v, not a token issued to the installation", rv)
		}
	}
	if left := r.fake.IssuedTokens(); len(left) != 0 {
		t.Fatalf("tokens still valid at GitHub: %v", left)
	}
	r.p.mu.Lock()
	_, kept := r.p.clients[960]
	r.p.mu.Unlock()
	if kept {
		t.Fatal("the revoked installation's client was kept")
	}
	if r.installation(960) != nil {
		t.Fatal("the installation record was kept")
	}
}
