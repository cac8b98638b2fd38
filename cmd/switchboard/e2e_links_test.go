package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// crossWorld is one serve child wired to a fake Slack (installed through
// OAuth), a fake GitHub (installation 777 on acme, with acme/widgets) and
// a fake Linear (installed), with the scripted model: each platform's
// world shares the server.
type crossWorld struct {
	t     *testing.T
	srv   *server
	ms    *modelserver.Server
	slack *slackWorld
	gh    *githubWorld
	lin   *linearWorld
}

func startCross(t *testing.T) *crossWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	sf, gf, lf := fakeslack.Start(t), fakegithub.Start(t), fakelinear.New(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	slackOAuthEnv(env, sf)
	githubEnv(env, gf)
	linearEnv(env, lf)
	env["SWITCHBOARD_SANDBOX"] = "none"
	srv := startServer(t, t.TempDir(), env)
	w := &crossWorld{t: t, srv: srv, ms: ms,
		slack: &slackWorld{t: t, ms: ms, fake: sf, srv: srv, env: env},
		gh:    &githubWorld{t: t, ms: ms, fake: gf, srv: srv, env: env},
		lin:   &linearWorld{t: t, ms: ms, fake: lf, srv: srv, env: env}}
	w.lin.issue = lf.SeedIssue(fakelinear.Issue{Title: "Widgets break on Mondays", Desc: "Steps: run it on a Monday."})
	w.lin.install()
	w.slack.install(fakeslack.Grant{Team: fakeslack.Team{ID: "T0ACME", Name: "Acme"}, Installer: "U0ADMIN"})
	w.slack.team = w.slack.teamByID("T0ACME")
	if code := w.gh.deliver("installation", "", installationPayload("created", installationID, "acme/widgets"), githubSecret); code != 200 {
		t.Fatalf("installation created: %d", code)
	}
	gf.SetPermission("alice", "write")
	return w
}

// installation is the id of the provider's one installation.
func (w *crossWorld) installation(provider string) string {
	w.t.Helper()
	list := listData[installationView](w.srv, "/v1/installations?provider="+provider)
	if len(list) != 1 {
		w.t.Fatalf("%d %s installations", len(list), provider)
	}
	return list[0].ID
}

// group puts the installations in one tenant group.
func (w *crossWorld) group(name string, ids ...string) {
	w.t.Helper()
	for _, id := range ids {
		if code, raw := w.srv.do("POST", "/v1/installations/"+id, map[string]any{"tenant_group": name}); code != 200 {
			w.t.Fatalf("tenant group of %s: %d %s", id, code, raw)
		}
	}
}

type linkedView struct {
	ID    string `json:"id"`
	Links []struct {
		Key     string `json:"key"`
		AddedBy string `json:"added_by"`
		URL     string `json:"url"`
	} `json:"links"`
}

func (w *crossWorld) view(id string) linkedView {
	w.t.Helper()
	code, raw := w.srv.do("GET", "/v1/sessions/"+id, nil)
	if code != 200 {
		w.t.Fatalf("get %s: %d %s", id, code, raw)
	}
	var v linkedView
	mustJSON(w.t, raw, &v)
	return v
}

// TestLinearSessionOpensAPullRequest is acceptance 1 of links: a Linear
// session whose agent was granted acme/widgets opens a pull request with
// mcp_github_create_pull_request; the pull request is linked to it and
// shown in the Linear activity; a review comment "@app fix the nit"
// steers the same session, whose answer goes to the review thread; two
// racing comments on the pull request still make no second session.
func TestLinearSessionOpensAPullRequest(t *testing.T) {
	w := startCross(t)
	ghIns, linIns := w.installation("github"), w.installation("linear")
	w.group("acme", ghIns, linIns)
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{
		"repository_access": map[string]any{"installation": ghIns, "repositories": []string{"acme/widgets"}}}); code != 200 {
		t.Fatalf("grant acme/widgets: %d %s", code, raw)
	}
	w.gh.fake.SetBranch("acme/widgets", "main", "1111111111111111111111111111111111111111")
	w.gh.fake.SetBranch("acme/widgets", "sb/mondays", "2222222222222222222222222222222222222222")
	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_pr", Name: "mcp_github_create_pull_request",
			Input: map[string]any{"head": "sb/mondays", "title": "Fix Mondays", "body": "Fixes the Linear issue."}}}},
		modelserver.Step{Text: "I opened a pull request."},
		modelserver.Step{Text: "Fixed the nit."},
	)
	as := w.lin.created("as-links-1")
	id := w.lin.session(as)
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	res := results(t, evs)["toolu_pr"]
	var pr struct {
		Number int
		URL    string
		Linked bool
	}
	if res.IsError || json.Unmarshal([]byte(res.Output), &pr) != nil || pr.Number == 0 || !pr.Linked {
		t.Fatalf("create_pull_request result %+v", res)
	}
	if is, ok := w.gh.fake.Issue("acme/widgets", pr.Number); !ok || is.Pull == nil || is.Title != "Fix Mondays" {
		t.Fatalf("no pull request #%d at GitHub: %+v", pr.Number, is)
	}
	prKey := fmt.Sprintf("github:acme/widgets#%d", pr.Number)
	if v := w.view(id); len(v.Links) != 1 || v.Links[0].Key != prKey || v.Links[0].AddedBy != "agent" || v.Links[0].URL != pr.URL {
		t.Fatalf("links %+v, want %s by the agent", v.Links, prKey)
	}
	linked := "action: Linked → [" + pr.URL + "](" + pr.URL + ")"
	w.lin.fake.WaitFor(t, patience, "the pull request in the Linear activity", func() bool {
		for _, a := range w.lin.activities(as) {
			if strings.HasPrefix(a, linked) {
				return true
			}
		}
		return false
	})

	// The reviewer's comment on the pull request steers the session.
	comment := w.gh.fake.AddComment("acme/widgets", pr.Number, true, "alice", "@sb-agent fix the nit")
	if code := w.gh.deliver("pull_request_review_comment", "", reviewComment(pr.Number, "2222222222222222222222222222222222222222", comment, 501, "alice", "@sb-agent fix the nit"), githubSecret); code != 200 {
		t.Fatalf("review comment: %d", code)
	}
	w.gh.fake.WaitFor(t, patience, "the answer in the review thread", func() bool {
		for _, c := range w.gh.botComments("acme/widgets", pr.Number) {
			if c.Review && c.InReplyTo == comment && strings.Contains(c.Body, "Fixed the nit.") {
				return true
			}
		}
		return false
	})
	if all := listData[sessionState](w.srv, "/v1/sessions"); len(all) != 1 || all[0].ID != id {
		t.Fatalf("sessions %+v, want only the Linear session", all)
	}
	if got := w.srv.sessionsByKey(prKey); len(got) != 1 || got[0].ID != id {
		t.Fatalf("origin_key=%s lists %+v, want the Linear session", prKey, got)
	}
	reqs := w.ms.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if raw := string(reqs[2].Raw); !strings.Contains(raw, "I opened a pull request.") || !strings.Contains(raw, "fix the nit") {
		t.Fatalf("the steered turn does not hold the session's history and the comment: %s", clipText(raw, 2000))
	}

	// Two comments at once on the linked pull request: one session still.
	w.ms.Push(modelserver.Step{Text: "Noted."}, modelserver.Step{Text: "Noted."})
	var wg sync.WaitGroup
	for i, body := range []string{"@sb-agent one more", "@sb-agent and another"} {
		c := w.gh.fake.AddComment("acme/widgets", pr.Number, false, "alice", body)
		wg.Go(func() {
			if code := w.gh.deliver("issue_comment", "", issueComment(pr.Number, true, c, "alice", body), githubSecret); code != 200 {
				t.Errorf("comment %d: %d", i, code)
			}
		})
	}
	wg.Wait()
	w.srv.waitFor(id, "both comments in the log", func(st sessionState, evs []event) bool {
		n := 0
		for _, e := range evs {
			if e.Type == "user.message" && (strings.Contains(string(e.Body), "one more") || strings.Contains(string(e.Body), "and another")) {
				n++
			}
		}
		return n == 2 && st.Status == "idle"
	})
	if all := listData[sessionState](w.srv, "/v1/sessions"); len(all) != 1 {
		t.Fatalf("%d sessions after two racing comments, want 1", len(all))
	}
}

// TestLinkAcrossCustomersRefused is acceptance 4 of links: a Slack thread
// and a GitHub pull request of installations outside one tenant group
// cannot be linked, from the API or with "continue <URL>", and each
// refusal says why; in one tenant group the same continue links them.
func TestLinkAcrossCustomersRefused(t *testing.T) {
	w := startCross(t)
	w.ms.Push(modelserver.Step{Text: "Looking at the pull request."}, modelserver.Step{Text: "Here from Slack."})
	comment := w.gh.fake.AddComment("acme/widgets", 5, false, "alice", "@sb-agent look")
	if code := w.gh.deliver("issue_comment", "", issueComment(5, true, comment, "alice", "@sb-agent look"), githubSecret); code != 200 {
		t.Fatalf("comment: %d", code)
	}
	prSession := w.gh.session("github:acme/widgets#5")
	w.srv.waitIdle(prSession)

	team := w.slack.team
	root := w.slack.fake.Human(team.ID, "C0GENERAL", "U0BOB", "<@"+team.BotUserID+"> continue <https://github.com/acme/widgets/pull/5>", "")
	threadKey := "slack:" + team.ID + ":C0GENERAL:" + root.TS
	if code, _ := w.slack.event(fakeslack.Mention(root)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.slack.waitReply(team, "C0GENERAL", root.TS, "not in a tenant group with this one")
	code, raw := w.srv.do("POST", "/v1/sessions/"+prSession+"/links", map[string]any{"key": threadKey})
	if code != 403 || !strings.Contains(string(raw), "not in a tenant group") {
		t.Fatalf("link over the API: %d %s, want 403 saying why", code, raw)
	}
	if v := w.view(prSession); len(v.Links) != 0 {
		t.Fatalf("links %+v after two refusals", v.Links)
	}
	if got := w.srv.sessionsByKey(threadKey); len(got) != 0 {
		t.Fatalf("the refused thread has sessions %+v", got)
	}

	// One tenant group: the same words link the thread.
	w.group("acme", w.installation("slack"), w.installation("github"))
	again := w.slack.fake.Human(team.ID, "C0GENERAL", "U0BOB", "<@"+team.BotUserID+"> continue <https://github.com/acme/widgets/pull/5>", root.TS)
	if code, _ := w.slack.event(fakeslack.Mention(again)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.slack.waitReply(team, "C0GENERAL", root.TS, "now continues the session")
	if v := w.view(prSession); len(v.Links) != 1 || v.Links[0].Key != threadKey || v.Links[0].AddedBy != "U0BOB" {
		t.Fatalf("links %+v, want the thread by U0BOB", v.Links)
	}
}

// clipText keeps the first n bytes of s for a failure message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
