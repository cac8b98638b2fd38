package gitlab_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/gitlab"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

const key = "gitlab:acme/widgets!1"

// rig is the provider over a store and a fake GitLab, its webhooks
// served: a merge request !1, a Developer and a Guest.
type rig struct {
	fake       *fakegitlab.Server
	store      *bolt.Store
	dev, guest *fakegitlab.User
	mr         *fakegitlab.Thread
	project    *fakegitlab.Project
	now        time.Time
}

func newRig(t *testing.T, legacy bool) *rig {
	t.Helper()
	fake := fakegitlab.Start(t)
	if legacy {
		fake.Legacy()
	}
	r := &rig{fake: fake, now: time.Now()}
	app := fake.AddUser("sb-agent", "glpat-test")
	r.dev, r.guest = fake.AddUser("alice", ""), fake.AddUser("gus", "")
	r.project = fake.AddProject("acme/widgets", "public")
	fake.SetAccess(r.project.ID, app.ID, fakegitlab.Maintainer)
	fake.SetAccess(r.project.ID, r.dev.ID, fakegitlab.Developer)
	fake.SetAccess(r.project.ID, r.guest.ID, fakegitlab.Guest)
	r.mr = fake.AddMergeRequest(r.project.ID, 1, "Fix", "Gears.", r.dev.ID, "abc123")
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r.store = store
	if _, err := store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	p, err := gitlab.New(gitlab.Config{URL: fake.URL, WebhookSecret: "s3cret", Token: "glpat-test", Project: "acme/widgets",
		Sessions: store, Installations: store, Intake: &providers.Intake{Store: store}, Now: func() time.Time { return r.now }})
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
	fake.SetHook(srv.URL+"/webhooks/gitlab", "s3cret")
	return r
}

func (r *rig) send(t *testing.T, d fakegitlab.Delivery, want int) {
	t.Helper()
	code, err := r.fake.Send(d)
	if err != nil || code != want {
		t.Fatalf("delivery: %d %v, want %d", code, err, want)
	}
}

// inputs are the inputs queued on the merge request's session, 0 with
// none.
func (r *rig) inputs(t *testing.T) int {
	t.Helper()
	s, err := r.store.SessionByKey(t.Context(), key)
	if errors.Is(err, core.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	pending, err := r.store.Pending(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(pending)
}

// TestDedupe: a retry (same Idempotency-Key, new event UUID), another
// note under a used Idempotency-Key, and the same note under a new key
// store nothing; an instance before 17.4,
// without the header, is deduped on the note and its action.
func TestDedupe(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		r := newRig(t, legacy)
		d := r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent look", "", true), "create")
		r.send(t, d, 200)
		r.send(t, d.Retry(), 200)
		again := d.Retry()
		again.Header.Set("Idempotency-Key", "another-key")
		r.send(t, again, 200)
		if n := r.inputs(t); n != 1 {
			t.Fatalf("legacy %v: %d inputs for one note, want 1", legacy, n)
		}
		if !legacy {
			// Another note (its id, its text) under the first delivery's
			// Idempotency-Key: only that key can dedupe it.
			replay := r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent a replay under the first key", "", true), "create")
			replay.Header.Set("Idempotency-Key", d.Header.Get("Idempotency-Key"))
			r.send(t, replay, 200)
			if n := r.inputs(t); n != 1 {
				t.Fatalf("%d inputs after a delivery under a used Idempotency-Key, want 1", n)
			}
		}
		r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent and this", "", true), "create"), 200)
		if n := r.inputs(t); n != 2 {
			t.Fatalf("legacy %v: %d inputs for two notes, want 2", legacy, n)
		}
	}
}

// TestTokenAndRoles: a wrong or missing token is 401; a Guest's
// mention is ignored on a public project; a Developer's is taken; the
// access level is read once per user while it is trusted.
func TestTokenAndRoles(t *testing.T) {
	r := newRig(t, false)
	d := r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent look", "", true), "create")
	r.send(t, d.WithToken("wrong"), 401)
	noToken := d.WithToken("")
	noToken.Header.Del("X-Gitlab-Token")
	r.send(t, noToken, 401)
	for range 2 {
		r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.guest.ID, "@sb-agent merge it", "", true), "create"), 200)
	}
	if n := r.inputs(t); n != 0 {
		t.Fatalf("%d inputs after a bad token and a Guest's mentions", n)
	}
	if calls := r.fake.CallsTo("GET", "/members/all/"); len(calls) != 1 {
		t.Fatalf("%d access level reads for one Guest within the cache's time, want 1", len(calls))
	}
	r.send(t, d, 200)
	if n := r.inputs(t); n != 1 {
		t.Fatalf("%d inputs after a Developer's mention, want 1", n)
	}
	// Once the answer is stale, the level is read again: a Guest made a
	// Developer is heard.
	r.fake.SetAccess(r.project.ID, r.guest.ID, fakegitlab.Developer)
	r.now = r.now.Add(2 * time.Minute)
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.guest.ID, "@sb-agent now", "", true), "create"), 200)
	if n := r.inputs(t); n != 2 {
		t.Fatalf("%d inputs after the promoted Guest's mention, want 2", n)
	}
}

// TestLabelTrigger: the trigger label added to a merge request starts
// its session; by a Guest it does not.
func TestLabelTrigger(t *testing.T) {
	r := newRig(t, false)
	r.send(t, r.fake.LabelHook(r.mr, r.guest.ID, "sb-agent"), 200)
	if n := r.inputs(t); n != 0 {
		t.Fatalf("a Guest's label queued %d inputs", n)
	}
	r.mr.Labels = nil
	r.send(t, r.fake.LabelHook(r.mr, r.dev.ID, "sb-agent"), 200)
	if n := r.inputs(t); n != 1 {
		t.Fatalf("%d inputs after the label, want 1", n)
	}
}

// TestPlainComments: a comment without a mention, in a thread or not,
// where the app never answered, is nobody's input and costs no look-up
// of the commenter's role.
func TestPlainComments(t *testing.T) {
	r := newRig(t, false)
	thread := r.fake.AddNote(r.mr, r.dev.ID, "looks good", "", true)
	r.send(t, r.fake.NoteHook(thread, "create"), 200)
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "agreed", thread.DiscussionID, true), "create"), 200)
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "a single comment", "", false), "create"), 200)
	if n := r.inputs(t); n != 0 {
		t.Fatalf("%d inputs from comments that do not mention the app", n)
	}
	if calls := r.fake.CallsTo("GET", "/members/all/"); len(calls) != 0 {
		t.Fatalf("the commenter's role was read %d times for plain comments", len(calls))
	}
}

// TestEditorCommand: "@app editor" is no message for the model: it is
// answered in the thread, without a token (everyone there reads it),
// pointing to the console and the CLI.
func TestEditorCommand(t *testing.T) {
	r := newRig(t, false)
	said := func(what string) {
		t.Helper()
		r.fake.WaitFor(t, time.Minute, "a note saying "+what, func() bool {
			for _, n := range r.fake.Notes(r.mr) {
				if strings.Contains(n.Body, what) {
					return true
				}
			}
			return false
		})
	}
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent editor", "", true), "create"), 200)
	said("no session here to open in an editor yet")
	if n := r.inputs(t); n != 0 {
		t.Fatalf("the editor command before any session queued %d inputs", n)
	}
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent look", "", true), "create"), 200)
	r.send(t, r.fake.NoteHook(r.fake.AddNote(r.mr, r.dev.ID, "@sb-agent editor", "", true), "create"), 200)
	said("switchboard session attach-token create")
	if n := r.inputs(t); n != 1 {
		t.Fatalf("%d inputs after a mention and the editor command, want the mention's only", n)
	}
}
