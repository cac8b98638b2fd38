package gitlab

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/providers"
)

// replica is another provider over the OAuth world's store, its webhooks
// served: a replica that did not handle the install.
func (w *oauthWorld) replica(t *testing.T, username string) *Provider {
	t.Helper()
	p, err := New(Config{URL: w.fake.URL, WebhookSecret: testHookSecret, ClientID: testClientID, ClientSecret: testClientSecret,
		Username: username, Sessions: w.store, Installations: w.store, Sealer: testSealer(t), Intake: &providers.Intake{Store: w.store}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(t.Context()) })
	mux := http.NewServeMux()
	p.RegisterWebhooks(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w.fake.SetHook(srv.URL+"/webhooks/gitlab", testHookSecret)
	return p
}

// sessionOf is the session keyed key, or nil.
func (w *oauthWorld) sessionOf(t *testing.T, key string) *core.Session {
	t.Helper()
	s, err := w.store.SessionByKey(t.Context(), key)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *oauthWorld) send(t *testing.T, d fakegitlab.Delivery) {
	t.Helper()
	if code, err := w.fake.Send(d); err != nil || code != http.StatusOK {
		t.Fatalf("delivery: %d %v", code, err)
	}
}

// TestReplicaLearnsTheAppUserFromTheInstall: a replica started before
// another one handled the install learns the app's user from the
// installation at its next webhook, and hears mentions of it.
func TestReplicaLearnsTheAppUserFromTheInstall(t *testing.T) {
	w := newOAuthWorld(t)
	if _, err := w.store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	other := w.replica(t, "") // started before the install: no user known
	if other.appUser() != "" {
		t.Fatalf("the replica knows %q before the install", other.appUser())
	}
	w.install(t) // on the first replica
	dev := w.fake.AddUser("alice", "")
	pr := w.fake.AddProject("acme/widgets", "private")
	w.fake.SetAccess(pr.ID, w.app.ID, fakegitlab.Developer)
	w.fake.SetAccess(pr.ID, dev.ID, fakegitlab.Developer)
	mr := w.fake.AddMergeRequest(pr.ID, 1, "Fix", "Gears.", dev.ID, "abc123")
	w.send(t, w.fake.NoteHook(w.fake.AddNote(mr, dev.ID, "@sb-agent look", "", true), "create"))
	if w.sessionOf(t, "gitlab:acme/widgets!1") == nil {
		t.Fatal("the replica ignored a mention of the installed app")
	}
	if other.appUser() != "sb-agent" {
		t.Fatalf("the replica's app user is %q", other.appUser())
	}
}

// TestAppUsersLabelTriggersNothing: a label the installing user adds
// starts no session, even when the settings name the app otherwise (the
// guard by the installation's user id).
func TestAppUsersLabelTriggersNothing(t *testing.T) {
	w := newOAuthWorld(t)
	if _, err := w.store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	w.install(t)
	w.replica(t, "sb-renamed") // its trigger label: sb-renamed
	dev := w.fake.AddUser("alice", "")
	pr := w.fake.AddProject("acme/widgets", "private")
	w.fake.SetAccess(pr.ID, w.app.ID, fakegitlab.Developer)
	w.fake.SetAccess(pr.ID, dev.ID, fakegitlab.Developer)
	mr := w.fake.AddMergeRequest(pr.ID, 1, "Fix", "Gears.", dev.ID, "abc123")
	w.send(t, w.fake.LabelHook(mr, w.app.ID, "sb-renamed"))
	if s := w.sessionOf(t, "gitlab:acme/widgets!1"); s != nil {
		t.Fatalf("the app's own label started session %s", s.ID)
	}
	mr.Labels = nil
	w.send(t, w.fake.LabelHook(mr, dev.ID, "sb-renamed"))
	if w.sessionOf(t, "gitlab:acme/widgets!1") == nil {
		t.Fatal("a Developer's label started nothing")
	}
}
