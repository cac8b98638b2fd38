package slack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeruntime"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/output"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

const testSecret = "test-signing-secret"

// rig is a provider in single-workspace mode over a real store and a
// fake Slack, its webhooks served by an httptest server.
type rig struct {
	t     *testing.T
	p     *Provider
	store *bolt.Store
	fake  *fakeslack.Server
	team  fakeslack.Team
	rt    *fakeruntime.Runtime
	srv   *httptest.Server
	agent *core.Agent
	sink  *output.Sink
}

func newRig(t *testing.T, team fakeslack.Team, withAgent bool) *rig {
	t.Helper()
	return newRigWith(t, team, withAgent, func(*Config) {})
}

// newRigWith is newRig with the provider's configuration adjusted.
func newRigWith(t *testing.T, team fakeslack.Team, withAgent bool, adjust func(*Config)) *rig {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
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
	r := &rig{t: t, store: store, fake: fake, team: team, rt: fakeruntime.Follow(store)}
	if withAgent {
		if r.agent, err = store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{SigningSecret: testSecret, BotToken: bot, APIURL: fake.APIURL(), Sessions: store, Installations: store,
		Sealer: sealer, Intake: &providers.Intake{Store: store}, StatusEvery: time.Millisecond}
	adjust(&cfg)
	r.p, err = New(cfg)
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
	r.sink = output.New(output.Config{Name: Name, Store: r.store, Renderer: r.p.Renderer(), RetryMin: 10 * time.Millisecond,
		ClaimTTL: time.Hour, ClaimRetry: 10 * time.Millisecond})
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
