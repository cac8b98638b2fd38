package linear

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeruntime"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/output"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/webhooks"
)

const (
	testSecret  = "linear-webhook-secret-test"
	testOrg     = "org-1"
	testAppUser = "app-user-1"
)

// fakePlatform is a hand-written Linear for the sink: it records
// activities by id (refusing an id it has, as Linear does) and can answer
// RATELIMITED or a userError.
type fakePlatform struct {
	mu         sync.Mutex
	activities []activity
	ids        map[string]bool
	updates    []sessionUpdate
	calls      int
	limited    int    // the next n calls are RATELIMITED
	refused    int    // calls answered RATELIMITED so far
	refuse     string // bodies holding this are refused (userError)
	block      chan struct{}
	// failPosts: the next n posts fail as a 502 would (after Linear has
	// them or not, the caller cannot tell).
	failPosts int
	// limitedLookups: the next n lookups are RATELIMITED.
	limitedLookups int
	// refuseUpdates: session updates are refused (userError).
	refuseUpdates bool
	// users are the workspace's people (user looks them up); userCalls
	// counts the look-ups.
	users     map[string]person
	userCalls int
	// suggestions answer repositorySuggestions; asked records each call's
	// issue and candidates.
	suggestions []suggestion
	asked       []suggestionCall
}

type suggestionCall struct {
	Issue, AgentSession string
	Candidates          []repoRef
}

func (f *fakePlatform) createActivity(ctx context.Context, a activity) error {
	if f.block != nil && a.kind() == "response" {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.limited > 0 {
		f.limited--
		f.refused++
		return &apiError{RateLimited: true, Reset: time.Now().Add(1100 * time.Millisecond), Msg: "RATELIMITED"}
	}
	if f.failPosts > 0 {
		f.failPosts--
		return errors.New("linear CreateAgentActivity: status 502")
	}
	if body, _ := a.Content["body"].(string); f.refuse != "" && bytes.Contains([]byte(body), []byte(f.refuse)) {
		return &apiError{UserError: true, Msg: "invalid input"}
	}
	if f.ids == nil {
		f.ids = map[string]bool{}
	}
	if f.ids[a.ID] {
		return &apiError{Exists: true, Msg: "already exists"}
	}
	f.ids[a.ID] = true
	f.activities = append(f.activities, a)
	return nil
}

func (f *fakePlatform) activityExists(_ context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.limitedLookups > 0 {
		f.limitedLookups--
		return false, &apiError{RateLimited: true, Reset: time.Now().Add(1100 * time.Millisecond), Msg: "RATELIMITED"}
	}
	return f.ids[id], nil
}

func (f *fakePlatform) updateSession(_ context.Context, _ string, u sessionUpdate) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.refuseUpdates {
		return &apiError{UserError: true, Msg: "invalid input"}
	}
	f.updates = append(f.updates, u)
	return nil
}

func (f *fakePlatform) user(_ context.Context, id string) (person, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.userCalls++
	u, ok := f.users[id]
	if !ok {
		return person{}, &apiError{UserError: true, Msg: "Entity not found: User"}
	}
	return u, nil
}

func (f *fakePlatform) repositorySuggestions(_ context.Context, issueID, agentSession string, candidates []repoRef) ([]suggestion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.asked = append(f.asked, suggestionCall{Issue: issueID, AgentSession: agentSession, Candidates: candidates})
	var out []suggestion
	for _, s := range f.suggestions {
		for _, c := range candidates {
			if strings.EqualFold(c.FullName, s.FullName) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func (f *fakePlatform) viewer(context.Context) (viewer, error) {
	return viewer{AppUserID: testAppUser, OrgID: testOrg, OrgName: "Acme"}, nil
}

// shown lists the recorded activities as "kind: text".
func (f *fakePlatform) shown() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.activities {
		text, _ := a.Content["body"].(string)
		if a.kind() == "action" {
			text, _ = a.Content["action"].(string)
			if r, ok := a.Content["result"].(string); ok {
				text += " → " + r
			}
		}
		if a.Ephemeral {
			text += " (ephemeral)"
		}
		out = append(out, a.kind()+": "+text)
	}
	return out
}

// rig is a provider over a real store and a fake Linear, its webhooks
// served by an httptest server.
type rig struct {
	t     *testing.T
	p     *Provider
	store *bolt.Store
	fake  *fakePlatform
	rt    *fakeruntime.Runtime
	srv   *httptest.Server
	in    *core.Installation
	sink  *output.Sink
}

func newRig(t *testing.T) *rig {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sealer, err := oauth.NewSealer("a master key for the linear tests")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, store: store, fake: &fakePlatform{}, rt: fakeruntime.Follow(store)}
	r.p, err = New(Config{ClientID: "client-1", ClientSecret: "s", WebhookSecret: testSecret, PublicURL: "https://sb.example",
		Sessions: store, Installations: store, Sealer: sealer, Intake: &providers.Intake{Store: store}, Burst: 1000, RequestsPerHour: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	r.p.newAPI = func(*core.Installation) platform { return r.fake }
	in := &core.Installation{Provider: Name, ExternalID: testOrg, Name: "Acme", Metadata: map[string]string{"app_user_id": testAppUser}}
	sealed, exp, err := r.p.tokens.Seal(in, oauth.TokenSet{AccessToken: "tok", RefreshToken: "ref", Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if r.in, err = store.SaveInstallation(t.Context(), in, sealed, exp); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	r.p.RegisterWebhooks(mux)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// startSink runs the Linear output sink over the rig's store.
func (r *rig) startSink() {
	r.sink = output.New(output.Config{Name: Name, Store: r.store, Renderer: r.p.Renderer(), RetryMin: 10 * time.Millisecond,
		ClaimTTL: time.Hour, ClaimRetry: 10 * time.Millisecond})
	if err := r.sink.Start(r.t.Context()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { r.sink.Stop(context.Background()) })
}

// send posts body signed with secret, with a delivery id.
func (r *rig) send(body []byte, secret, delivery string) int {
	r.t.Helper()
	req, err := http.NewRequest("POST", r.srv.URL+"/webhooks/linear", bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Linear-Signature", webhooks.HMACHex(secret, body))
	req.Header.Set("Linear-Delivery", delivery)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var deliveries int

// deliver sends a payload signed with the rig's secret, fresh delivery.
func (r *rig) deliver(payload map[string]any) int {
	r.t.Helper()
	deliveries++
	return r.send(mustJSON(r.t, payload), testSecret, fmt.Sprintf("delivery-%d-%d", deliveries, time.Now().UnixNano()))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Payload builders, shaped as AgentSessionEventWebhookPayload in Linear's
// schema.

func nowMS() float64 { return float64(time.Now().UnixMilli()) }

func issue() map[string]any {
	return map[string]any{"id": "issue-1", "identifier": "ENG-1", "title": "Widgets break", "description": "On Mondays.",
		"url": "https://linear.app/acme/issue/ENG-1/widgets-break", "teamId": "team-1", "team": map[string]any{"id": "team-1", "key": "ENG", "name": "Engineering"}}
}

func agentSession(id string) map[string]any {
	return map[string]any{"id": id, "appUserId": testAppUser, "organizationId": testOrg, "status": "pending", "type": "issue",
		"issueId": "issue-1", "issue": issue(), "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z"}
}

func created(sessionID string) map[string]any {
	return map[string]any{"type": "AgentSessionEvent", "action": "created", "organizationId": testOrg, "appUserId": testAppUser,
		"oauthClientId": "client-1", "webhookId": "webhook-1", "webhookTimestamp": nowMS(), "createdAt": "2026-11-22T10:00:00.000Z",
		"agentSession":     agentSession(sessionID),
		"promptContext":    "<issue identifier=\"ENG-1\"><title>Widgets break</title></issue>",
		"previousComments": []map[string]any{{"id": "c-0", "body": "It started last week.", "userId": "user-2", "issueId": "issue-1"}},
		"guidance": []map[string]any{{"body": "Answer in English.", "origin": map[string]any{"type": "Team",
			"team": map[string]any{"id": "team-1", "key": "ENG", "name": "Engineering"}}}}}
}

func prompted(sessionID, text, signal string) map[string]any {
	act := map[string]any{"id": "act-" + text, "agentSessionId": sessionID, "content": map[string]any{"type": "prompt", "body": text},
		"userId": "user-2", "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z"}
	if signal != "" {
		act["signal"] = signal
	}
	return map[string]any{"type": "AgentSessionEvent", "action": "prompted", "organizationId": testOrg, "appUserId": testAppUser,
		"oauthClientId": "client-1", "webhookId": "webhook-1", "webhookTimestamp": nowMS(), "agentSession": agentSession(sessionID),
		"agentActivity": act}
}
