package slack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/outbox"
	"github.com/switchboardhq/switchboard/sessions"
)

const testSecret = "test-signing-secret"

// fakeRuntime records wakes and interrupts.
type fakeRuntime struct {
	mu          sync.Mutex
	woken, stop []string
}

func (f *fakeRuntime) Wake(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.woken = append(f.woken, id)
}

func (f *fakeRuntime) Interrupt(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stop = append(f.stop, id)
}

// rig is a provider in single-workspace mode over a real store and a
// fake Slack, its webhooks served by an httptest server.
type rig struct {
	t     *testing.T
	p     *Provider
	store *sessions.Store
	fake  *fakeslack.Server
	team  fakeslack.Team
	rt    *fakeRuntime
	srv   *httptest.Server
	agent *core.Agent
	sink  *outbox.Sink
}

func newRig(t *testing.T, team fakeslack.Team, withAgent bool) *rig {
	t.Helper()
	store, err := sessions.Open(filepath.Join(t.TempDir(), "switchboard.db"), sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sealer, err := oauth.NewSealer("a master key for the slack tests")
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(team)
	team, _ = fake.Team(team.ID)
	r := &rig{t: t, store: store, fake: fake, team: team, rt: &fakeRuntime{}}
	if withAgent {
		if r.agent, err = store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
			t.Fatal(err)
		}
	}
	r.p, err = New(Config{SigningSecret: testSecret, BotToken: bot, APIURL: fake.APIURL(), Sessions: store, Installations: store,
		Sealer: sealer, Runtime: r.rt, StatusEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.p.Stop(context.Background()) })
	mux := http.NewServeMux()
	r.p.RegisterWebhooks(mux)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// startSink runs the Slack output sink over the rig's store.
func (r *rig) startSink() {
	r.sink = outbox.New(outbox.Config{Name: Name, Store: r.store, Renderer: r.p.Renderer(), RetryMin: 10 * time.Millisecond})
	r.p.OnQueued(r.sink.Activate)
	if err := r.sink.Start(r.t.Context()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { r.sink.Stop(context.Background()) })
}

func (r *rig) send(path, contentType string, body []byte) int {
	r.t.Helper()
	resp, err := http.DefaultClient.Do(fakeslack.SignedRequest(r.srv.URL+path, testSecret, time.Now(), contentType, body))
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (r *rig) event(inner map[string]any) int {
	return r.send("/webhooks/slack", "application/json", fakeslack.Event{Team: r.team, Inner: inner}.JSON())
}
