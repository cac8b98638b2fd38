package linearapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/providers/linear/linearapi"
)

// bearer adds a token to every request, as the provider's oauth2
// transport does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func clientFor(f *fakelinear.Server, token string) *http.Client {
	return &http.Client{Transport: bearer{token}, Timeout: 10 * time.Second}
}

func TestSinkOperationsAgainstFake(t *testing.T) {
	f := fakelinear.New(t)
	c := linearapi.NewClient(f.URL()+"/graphql", clientFor(f, f.Token()))
	ctx := context.Background()

	v, err := linearapi.Viewer(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if v.Viewer.Id != f.AppUserID || v.Organization.Id != f.Org.ID || v.Organization.UrlKey != f.Org.URLKey || v.Organization.Name != f.Org.Name {
		t.Fatalf("viewer = %+v, org = %+v; want app user %s in %+v", v.Viewer, v.Organization, f.AppUserID, f.Org)
	}

	result := "3 files"
	steps := []struct {
		content   linearapi.Content
		ephemeral bool
	}{
		{linearapi.Content{Type: linearapi.Thought, Body: "Looking into it"}, false},
		{linearapi.Content{Type: linearapi.Action, Action: "Searching", Parameter: "repo"}, true},
		{linearapi.Content{Type: linearapi.Action, Action: "Searched", Parameter: "repo", Result: &result}, false},
		{linearapi.Content{Type: linearapi.Elicitation, Body: "Which branch?"}, false},
		{linearapi.Content{Type: linearapi.Response, Body: "Done."}, false},
		{linearapi.Content{Type: linearapi.ErrorType, Body: "It broke."}, false},
	}
	for _, s := range steps {
		id, err := linearapi.CreateActivity(ctx, c, "sess-1", s.content, s.ephemeral)
		if err != nil || id == "" {
			t.Fatalf("CreateActivity(%+v) = %q, %v", s.content, id, err)
		}
	}
	acts := f.Activities()
	if len(acts) != len(steps) {
		t.Fatalf("fake recorded %d activities, want %d", len(acts), len(steps))
	}
	for i, a := range acts {
		want := steps[i]
		if a.SessionID != "sess-1" || a.Type != want.content.Type || a.Ephemeral != want.ephemeral ||
			a.Body != want.content.Body || a.Action != want.content.Action || a.Parameter != want.content.Parameter {
			t.Errorf("activity %d = %+v, want %+v ephemeral=%v", i, a, want.content, want.ephemeral)
		}
	}
	if acts[2].Result != result {
		t.Errorf("action result = %q, want %q", acts[2].Result, result)
	}
	// Unset optional variables are not sent at all (null would clear).
	m := f.Mutations()[0]
	if _, sent := m.Variables["ephemeral"]; sent {
		t.Errorf("a non-ephemeral activity sent ephemeral: %v", m.Variables)
	}

	// An activity posted with its own id can be looked up, and posting
	// that id again is refused (what makes a retried post land once).
	id := "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	raw, _ := json.Marshal(linearapi.Content{Type: linearapi.Thought, Body: "again"})
	if _, err := linearapi.GetAgentActivity(ctx, c, id); !linearapi.NotFound(err) || !linearapi.UserError(err) {
		t.Fatalf("unknown activity: %v", err)
	}
	if _, err := linearapi.CreateAgentActivity(ctx, c, "sess-1", raw, nil, &id, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := linearapi.GetAgentActivity(ctx, c, id); err != nil || got.AgentActivity.Id != id || got.AgentActivity.AgentSession.Id != "sess-1" {
		t.Fatalf("GetAgentActivity = %+v, %v", got, err)
	}
	if _, err := linearapi.CreateAgentActivity(ctx, c, "sess-1", raw, nil, &id, nil, nil); !linearapi.UserError(err) || linearapi.NotFound(err) {
		t.Fatalf("a second post of id %s: %v, want a user error", id, err)
	}
	if n := len(f.Activities()); n != len(steps)+1 {
		t.Fatalf("%d activities after the refused repeat, want %d", n, len(steps)+1)
	}

	if err := linearapi.SetExternalURL(ctx, c, "sess-1", "https://gw.example/sessions/ses_1", "Switchboard"); err != nil {
		t.Fatal(err)
	}
	if err := linearapi.SetPlan(ctx, c, "sess-1", []linearapi.PlanStep{{Content: "Read the issue", Status: "completed"}, {Content: "Fix", Status: "inProgress"}}); err != nil {
		t.Fatal(err)
	}
	sess, _ := f.Session("sess-1")
	if sess.ExternalLink != "https://gw.example/sessions/ses_1" || len(sess.ExternalURLs) != 1 || sess.ExternalURLs[0].URL != sess.ExternalLink {
		t.Errorf("session = %+v, want the external link and URL set", sess)
	}
	plan, _ := json.Marshal(sess.Plan)
	if string(plan) != `[{"content":"Read the issue","status":"completed"},{"content":"Fix","status":"inProgress"}]` {
		t.Errorf("plan = %s", plan)
	}
	// Setting the plan left the link alone: only given fields are sent.
	for _, m := range f.Mutations()[len(steps)+3:] {
		if _, sent := m.Variables["externalLink"]; sent {
			t.Errorf("SetPlan sent externalLink: %v", m.Variables)
		}
	}
}

func TestErrorClassificationAgainstFake(t *testing.T) {
	f := fakelinear.New(t)
	ctx := context.Background()
	c := linearapi.NewClient(f.URL()+"/graphql", clientFor(f, f.Token()))
	thought := linearapi.Content{Type: linearapi.Thought, Body: "hm"}

	f.SetRetryAfter(3 * time.Second)
	f.RateLimit(1)
	_, err := linearapi.CreateActivity(ctx, c, "s", thought, false)
	wait, limited := linearapi.RateLimited(err)
	if !limited || wait <= time.Second || wait > 3*time.Second || linearapi.UserError(err) {
		t.Fatalf("rate limited answer: err=%v wait=%v limited=%v userError=%v", err, wait, limited, linearapi.UserError(err))
	}
	if _, err := linearapi.CreateActivity(ctx, c, "s", thought, false); err != nil {
		t.Fatalf("after the limit: %v", err)
	}

	f.FailNext("agentActivityCreate", "Agent session not found")
	_, err = linearapi.CreateActivity(ctx, c, "s", thought, false)
	var le *linearapi.Error
	if !linearapi.UserError(err) || !errors.As(err, &le) || le.Message() != "Agent session not found" {
		t.Fatalf("user error answer: %v", err)
	}
	if _, limited := linearapi.RateLimited(err); limited {
		t.Fatal("a user error read as a rate limit")
	}

	// Ephemeral is only for thoughts and actions: Linear refuses it.
	_, err = linearapi.CreateActivity(ctx, c, "s", linearapi.Content{Type: linearapi.Response, Body: "x"}, true)
	if !linearapi.UserError(err) {
		t.Fatalf("ephemeral response: %v, want a user error", err)
	}

	f.ExpireAccessTokens()
	_, err = linearapi.Viewer(ctx, c)
	if !linearapi.Unauthenticated(err) || linearapi.UserError(err) {
		t.Fatalf("expired token: %v (unauthenticated=%v)", err, linearapi.Unauthenticated(err))
	}
}

// TestErrorClassification covers answers the fake does not give: a 429,
// Retry-After, seconds in the reset header, a 200 carrying errors, and a
// transport failure.
func TestErrorClassification(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name          string
		status        int
		header        map[string]string
		body          string
		limited, user bool
		unauth        bool
		minWait       time.Duration
		maxWait       time.Duration
	}{
		{name: "RATELIMITED with 400 and reset in ms", status: 400,
			header:  map[string]string{"X-RateLimit-Requests-Reset": strconv.FormatInt(now.Add(30*time.Second).UnixMilli(), 10)},
			body:    `{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`,
			limited: true, minWait: 25 * time.Second, maxWait: 30 * time.Second},
		{name: "429 with Retry-After", status: 429, header: map[string]string{"Retry-After": "7"}, body: `rate limited`,
			limited: true, minWait: 7 * time.Second, maxWait: 7 * time.Second},
		{name: "ratelimited type and complexity reset in seconds", status: 400,
			header:  map[string]string{"X-RateLimit-Complexity-Reset": strconv.FormatInt(now.Add(time.Minute).Unix(), 10)},
			body:    `{"errors":[{"message":"x","extensions":{"type":"ratelimited"}}]}`,
			limited: true, minWait: 50 * time.Second, maxWait: time.Minute},
		{name: "rate limited with no time named", status: 400, body: `{"errors":[{"message":"x","extensions":{"code":"RATELIMITED"}}]}`, limited: true},
		{name: "userError in a 200", status: 200,
			body: `{"data":null,"errors":[{"message":"Entity not found","extensions":{"userError":true,"userPresentableMessage":"Could not find it."}}]}`, user: true},
		{name: "invalid input type", status: 400, body: `{"errors":[{"message":"Argument Validation Error","extensions":{"type":"invalid input"}}]}`, user: true},
		{name: "validation failure", status: 400, body: `{"errors":[{"message":"Cannot query field","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`, user: true},
		{name: "authentication", status: 401, body: `{"errors":[{"message":"Authentication required","extensions":{"type":"authentication error","userError":true}}]}`, unauth: true},
		{name: "internal error is retryable", status: 500, body: `{"errors":[{"message":"boom","extensions":{"type":"internal error"}}]}`},
		{name: "bad gateway html is retryable", status: 502, body: `<html>bad gateway</html>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			_, err := linearapi.Viewer(context.Background(), linearapi.NewClient(srv.URL, srv.Client()))
			if err == nil {
				t.Fatal("no error")
			}
			wait, limited := linearapi.RateLimited(err)
			if limited != tt.limited || linearapi.UserError(err) != tt.user || linearapi.Unauthenticated(err) != tt.unauth {
				t.Fatalf("%v: limited=%v user=%v unauth=%v, want %v %v %v", err, limited, linearapi.UserError(err), linearapi.Unauthenticated(err), tt.limited, tt.user, tt.unauth)
			}
			if wait < tt.minWait || wait > tt.maxWait {
				t.Fatalf("retry after %v, want %v..%v", wait, tt.minWait, tt.maxWait)
			}
		})
	}
	t.Run("transport failure is neither", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := linearapi.Viewer(context.Background(), linearapi.NewClient(srv.URL, nil))
		if _, limited := linearapi.RateLimited(err); err == nil || limited || linearapi.UserError(err) || linearapi.Unauthenticated(err) {
			t.Fatalf("transport error %v classified as a Linear answer", err)
		}
	})
}
