package providers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// resolver is a hand-written LinkResolver: addresses and installations
// by key.
type resolver struct {
	keys     map[string]string
	installs map[string]*core.Installation
}

func (r resolver) KeyOfURL(_ context.Context, raw string) (string, error) {
	if k, ok := r.keys[raw]; ok {
		return k, nil
	}
	return "", core.ErrInvalid
}

func (r resolver) Threads() string { return "a thread of the fake" }

func (r resolver) InstallationOfKey(_ context.Context, key string) (*core.Installation, error) {
	for prefix, in := range r.installs {
		if strings.HasPrefix(key, prefix) {
			return in, nil
		}
	}
	return nil, core.ErrInvalid
}

// TestRouteContinue: "continue <URL>" links the thread's key to the
// session at the address when both are of one installation or tenant
// group and the person may trigger there; every refusal says why, and
// nothing is linked.
func TestRouteContinue(t *testing.T) {
	const pr, thread, thread2 = "github:acme/app#7", "slack:T1:C1:4.000100", "slack:T1:C1:5.000100"
	slackIn := &core.Installation{ID: "ins_s", Provider: "slack", ExternalID: "T1", Name: "acme"}
	ghIn := &core.Installation{ID: "ins_g", Provider: "github", ExternalID: "99", Name: "acme"}
	s := openStore(t)
	ctx := t.Context()
	if _, err := s.CreateAgent(ctx, &core.Agent{Name: "default", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_x", Version: 1}, Origin: &core.Origin{Provider: "github", Key: pr, TenantID: "99"}}, ExternalKey: pr})
	if err != nil {
		t.Fatal(err)
	}
	target := res.Session
	_, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_x", Version: 1}, Origin: &core.Origin{Provider: "slack", Key: thread2}}, ExternalKey: thread2})
	if err != nil {
		t.Fatal(err)
	}
	links := resolver{keys: map[string]string{"https://github.com/acme/app/pull/7": pr, "https://github.com/acme/app/pull/8": "github:acme/app#8"},
		installs: map[string]*core.Installation{"github:": ghIn, "slack:": slackIn}}
	r := &providers.Intake{Store: s, Links: links}
	route := func(key, url string) providers.Routed {
		t.Helper()
		got, err := r.Route(ctx, providers.Trigger{Installation: slackIn, Origin: core.Origin{Provider: "slack", Key: key}, Input: message("continue " + url), ContinueURL: url, Actor: "U1"})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tt := range []struct {
		name, key, url, want string
		group                string
		users                []string
	}{
		{"another customer", thread, "https://github.com/acme/app/pull/7", "not in a tenant group", "", nil},
		{"an address of nothing here", thread, "https://example.com/x", "is not one", "acme", nil},
		{"no session there", thread, "https://github.com/acme/app/pull/8", "no session of mine", "acme", nil},
		{"a thread with its own session", thread2, "https://github.com/acme/app/pull/7", "a session of its own", "acme", nil},
		{"not allowed there", thread, "https://github.com/acme/app/pull/7", "you are not among them", "acme", []string{"octocat"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			slackIn.TenantGroup, ghIn.TenantGroup, ghIn.Policy.Users = tt.group, tt.group, tt.users
			got := route(tt.key, tt.url)
			if got.Outcome != providers.LinkRefused || !strings.Contains(got.Note, tt.want) {
				t.Fatalf("%+v, want a refusal saying %q", got, tt.want)
			}
			if s, _ := s.GetSession(ctx, target.ID); len(s.Links) != 0 {
				t.Fatalf("a refused continue linked %+v", s.Links)
			}
		})
	}
	slackIn.TenantGroup, ghIn.TenantGroup, ghIn.Policy.Users = "acme", "acme", nil
	got := route(thread, "https://github.com/acme/app/pull/7")
	if got.Outcome != providers.Linked || got.Session.ID != target.ID || !strings.Contains(got.Note, "now continues") {
		t.Fatalf("continue: %+v", got)
	}
	linked, _ := s.GetSession(ctx, target.ID)
	if len(linked.Links) != 1 || linked.Links[0].Key != thread || linked.Links[0].AddedBy != "U1" {
		t.Fatalf("links %+v", linked.Links)
	}
	// A message in the thread now reaches the pull request's session.
	steer, err := r.Route(ctx, providers.Trigger{Installation: slackIn, Origin: core.Origin{Provider: "slack", Key: thread}, Input: message("and the tests?"), Continue: true})
	if err != nil || steer.Outcome != providers.Queued || steer.Session.ID != target.ID {
		t.Fatalf("a reply in the linked thread: %+v, %v", steer, err)
	}
	if again := route(thread, "https://github.com/acme/app/pull/7"); again.Outcome != providers.Linked || !strings.Contains(again.Note, "already continues") {
		t.Fatalf("continue again: %+v", again)
	}
}
