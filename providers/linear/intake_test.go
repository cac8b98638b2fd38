package linear

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func (r *rig) sessionOf(agentSession string) *core.Session {
	r.t.Helper()
	s, err := r.store.SessionByKey(r.t.Context(), key(testOrg, agentSession))
	if err != nil {
		r.t.Fatalf("no session for %s: %v", agentSession, err)
	}
	return s
}

func (r *rig) pending(id string) []core.Event {
	r.t.Helper()
	evs, err := r.store.Pending(r.t.Context(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return evs
}

func TestIntakeRefusesBeforeStoring(t *testing.T) {
	r := newRig(t)
	stale := created("as-stale")
	stale["webhookTimestamp"] = float64(time.Now().Add(-2 * time.Minute).UnixMilli())
	noTS := created("as-nots")
	delete(noTS, "webhookTimestamp")
	tests := []struct {
		name string
		body []byte
		want int
	}{
		{"two minutes old", mustJSON(t, stale), 401},
		{"no timestamp", mustJSON(t, noTS), 401},
		{"malformed", []byte(`{"type":`), 400},
		{"no type", mustJSON(t, map[string]any{"webhookTimestamp": nowMS()}), 400},
		{"created without a session", mustJSON(t, map[string]any{"type": "AgentSessionEvent", "action": "created", "organizationId": testOrg, "webhookTimestamp": nowMS()}), 400},
		{"unknown type", mustJSON(t, map[string]any{"type": "Reaction", "action": "create", "organizationId": testOrg, "webhookTimestamp": nowMS()}), 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.send(tc.body, testSecret, "d-"+tc.name); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
	page, err := r.store.ListSessions(t.Context(), core.SessionFilter{})
	list := page.Sessions
	if err != nil || len(list) != 0 {
		t.Fatalf("sessions stored: %d %v", len(list), err)
	}
}

// TestIntakeCreatedStartsTheSession: a new agent session starts the
// session, the issue recorded on it, with Linear's prompt context, the
// earlier comments and the guidance as its first input. Replays are
// providertest's.
func TestIntakeCreatedStartsTheSession(t *testing.T) {
	r := newRig(t)
	if code := r.deliver(created("as-1")); code != 200 {
		t.Fatalf("status %d", code)
	}
	s := r.sessionOf("as-1")
	if s.Origin.URL != "https://linear.app/acme/issue/ENG-1/widgets-break" || s.Origin.Title != "Widgets break" || s.Origin.TenantID != testOrg || s.Tenant != "linear:"+testOrg ||
		s.Metadata[metaIssueID] != "issue-1" || s.Metadata[metaIssue] != "ENG-1" || s.Metadata[metaAgentSession] != "as-1" {
		t.Fatalf("session %+v origin %+v", s, s.Origin)
	}
	in := r.pending(s.ID)
	if len(in) != 1 {
		t.Fatalf("%d inputs for one delivery", len(in))
	}
	var b inputBody
	if err := in[0].Decode(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>Widgets break</title>", "It started last week.", "(team Engineering) Answer in English."} {
		if !strings.Contains(b.Text, want) {
			t.Fatalf("first input %q lacks %q", b.Text, want)
		}
	}
}

// TestIntakePromptsSteer: a prompt is a message to the session, marked
// as prompted. The stop signal is providertest's.
func TestIntakePromptsSteer(t *testing.T) {
	r := newRig(t)
	if code := r.deliver(created("as-2")); code != 200 {
		t.Fatalf("created: %d", code)
	}
	s := r.sessionOf("as-2")
	if code := r.deliver(prompted("as-2", "use the staging database", "")); code != 200 {
		t.Fatalf("prompted: %d", code)
	}
	in := r.pending(s.ID)
	var b inputBody
	if len(in) != 2 || in[1].Decode(&b) != nil || b.Text != "use the staging database" || b.Linear.Action != actionPrompted {
		t.Fatalf("inputs %v", in)
	}
}

// TestIntakeRetryWord: "retry" prompted after a turn failed queues a
// user.retry of that turn; with nothing to retry the word is an ordinary
// message to the agent.
func TestIntakeRetryWord(t *testing.T) {
	r := newRig(t)
	if code := r.deliver(created("as-r")); code != 200 {
		t.Fatalf("created: %d", code)
	}
	s := r.sessionOf("as-r")
	// Nothing finished yet: the word is a message.
	if code := r.deliver(prompted("as-r", "Retry", "")); code != 200 {
		t.Fatalf("prompted: %d", code)
	}
	in := r.pending(s.ID)
	if len(in) != 2 || in[1].Type != core.TypeUserMessage {
		t.Fatalf("inputs %v", in)
	}
	// A turn takes them and fails.
	status := func(st core.Status, why core.Reason) core.Event {
		return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: st, StopReason: why})
	}
	for _, req := range []core.AppendRequest{
		{TurnID: "turn_f", TakeInputs: true, Events: []core.Event{status(core.StatusRunning, ""), core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})}},
		{TurnID: "turn_f", Events: []core.Event{
			core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "overloaded"}),
			core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonError}),
			status(core.StatusFailed, core.ReasonError)}},
	} {
		if _, err := r.store.Append(t.Context(), s.ID, req); err != nil {
			t.Fatal(err)
		}
	}
	if code := r.deliver(prompted("as-r", " retry. ", "")); code != 200 {
		t.Fatalf("retry: %d", code)
	}
	in = r.pending(s.ID)
	var b core.RetryBody
	if len(in) != 1 || in[0].Type != core.TypeUserRetry || in[0].Decode(&b) != nil || b.TurnID != "turn_f" {
		t.Fatalf("inputs after retry %v", in)
	}
}

func TestIntakeDelegateRemovedInterrupts(t *testing.T) {
	tests := []struct {
		name    string
		payload map[string]any
		stops   bool
	}{
		{"issue update away from the app", map[string]any{"type": "Issue", "action": "update", "organizationId": testOrg, "webhookTimestamp": nowMS(),
			"data": map[string]any{"id": "issue-1", "identifier": "ENG-1", "delegateId": nil}, "updatedFrom": map[string]any{"delegateId": testAppUser}}, true},
		{"app user notification", map[string]any{"type": "AppUserNotification", "action": "issueUnassignedFromYou", "organizationId": testOrg,
			"appUserId": testAppUser, "webhookTimestamp": nowMS(), "notification": map[string]any{"id": "n-1", "type": "issueUnassignedFromYou", "issueId": "issue-1", "issue": issue()}}, true},
		{"another delegate changed", map[string]any{"type": "Issue", "action": "update", "organizationId": testOrg, "webhookTimestamp": nowMS(),
			"data": map[string]any{"id": "issue-1", "delegateId": nil}, "updatedFrom": map[string]any{"delegateId": "someone-else"}}, false},
		{"title changed", map[string]any{"type": "Issue", "action": "update", "organizationId": testOrg, "webhookTimestamp": nowMS(),
			"data": map[string]any{"id": "issue-1", "delegateId": testAppUser}, "updatedFrom": map[string]any{"title": "old"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if code := r.deliver(created("as-3")); code != 200 {
				t.Fatalf("created: %d", code)
			}
			s := r.sessionOf("as-3")
			if code := r.deliver(tc.payload); code != 200 {
				t.Fatalf("status %d", code)
			}
			stopped := len(r.rt.Stopped()) == 1
			if stopped != tc.stops || (len(r.pending(s.ID)) == 2) != tc.stops {
				t.Fatalf("interrupted %v, want %v", r.rt.Stopped(), tc.stops)
			}
		})
	}
}

func TestIntakeRevokedForgetsTokens(t *testing.T) {
	r := newRig(t)
	other := map[string]any{"type": "OAuthApp", "action": "revoked", "organizationId": testOrg, "oauthClientId": "another-app", "webhookTimestamp": nowMS()}
	if code := r.deliver(other); code != 200 {
		t.Fatalf("status %d", code)
	}
	if _, err := r.store.InstallationTokens(t.Context(), r.in.ID); err != nil {
		t.Fatalf("another app's revocation forgot the tokens: %v", err)
	}
	ours := map[string]any{"type": "OAuthApp", "action": "revoked", "organizationId": testOrg, "oauthClientId": "client-1", "webhookTimestamp": nowMS()}
	if code := r.deliver(ours); code != 200 {
		t.Fatalf("status %d", code)
	}
	in, err := r.store.GetInstallation(t.Context(), r.in.ID)
	if err != nil || in.HasToken {
		t.Fatalf("installation %+v, %v", in, err)
	}
	if _, err := r.store.InstallationTokens(t.Context(), r.in.ID); err == nil {
		t.Fatal("tokens kept after revocation")
	}
}
