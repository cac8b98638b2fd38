package main_test

import (
	"bytes"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// startSlackOAuth runs serve with the Slack app's client id and secret
// (installs through /oauth/slack/install) against a fake Slack; extra
// adds to the environment.
func startSlackOAuth(t *testing.T, extra ...map[string]string) *slackWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	fake := fakeslack.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	slackOAuthEnv(env, fake)
	for _, more := range extra {
		maps.Copy(env, more)
	}
	w := &slackWorld{t: t, ms: ms, fake: fake, env: env}
	w.srv = startServer(t, t.TempDir(), env)
	return w
}

// slackOAuthEnv sets the variables of a Slack app the fake serves,
// installed through OAuth.
func slackOAuthEnv(env map[string]string, fake *fakeslack.Server) {
	env["SLACK_SIGNING_SECRET"] = slackSecret
	env["SLACK_CLIENT_ID"] = fake.ClientID
	env["SLACK_CLIENT_SECRET"] = fake.ClientSecret
	env["SLACK_API_URL"] = fake.APIURL()
	env["SLACK_USER_SCOPES"] = "search:read"
	env["SLACK_PROGRESS_MS"] = "1"
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// install runs the OAuth install in a "browser": the gateway's install
// link, Slack's consent page (approving g), the gateway's callback.
func (w *slackWorld) install(g fakeslack.Grant) string {
	w.t.Helper()
	w.fake.Approve(g)
	next := w.srv.url + "/oauth/slack/install"
	for hop := 0; hop < 2; hop++ {
		resp, err := noFollow.Get(next)
		if err != nil {
			w.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			w.t.Fatalf("GET %s: %d", next, resp.StatusCode)
		}
		next = resp.Header.Get("Location")
	}
	if !strings.HasPrefix(next, w.srv.url+"/oauth/slack/callback?") {
		w.t.Fatalf("consent sent the browser to %s", next)
	}
	resp, err := http.Get(next)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		w.t.Fatalf("callback: %d", resp.StatusCode)
	}
	return next
}

type installationView struct {
	ID             string  `json:"id"`
	Provider       string  `json:"provider"`
	ExternalID     string  `json:"external_id"`
	Agent          string  `json:"agent"`
	HasToken       bool    `json:"has_token"`
	TokenExpiresAt *string `json:"token_expires_at"`
}

func (w *slackWorld) installations() map[string]installationView {
	w.t.Helper()
	code, raw := w.srv.do("GET", "/v1/installations", nil)
	if code != 200 {
		w.t.Fatalf("list installations: %d %s", code, raw)
	}
	var page struct {
		Data []installationView `json:"data"`
	}
	mustJSON(w.t, raw, &page)
	out := map[string]installationView{}
	for _, in := range page.Data {
		out[in.ExternalID] = in
	}
	return out
}

// TestSlackOAuthInstall is acceptance 6: the install against the fake
// stores the token encrypted (no plaintext token in the bbolt file); with
// token rotation on, an expiring token is refreshed before use; two
// workspaces' threads map to separate sessions and tokens; a user outside
// the access policy triggers nothing and is told so once; uninstalling
// forgets the tokens.
func TestSlackOAuthInstall(t *testing.T) {
	w := startSlackOAuth(t)
	one := fakeslack.Team{ID: "T0ONE", Name: "One"}
	two := fakeslack.Team{ID: "T0TWO", Name: "Two"}
	callback := w.install(fakeslack.Grant{Team: one, Installer: "U0ADMIN", Rotation: true, ExpiresIn: time.Minute})
	w.install(fakeslack.Grant{Team: two, Installer: "U0ADMIN2", NoUserToken: true})
	one, two = w.teamByID("T0ONE"), w.teamByID("T0TWO")

	t.Run("the state is single-use", func(t *testing.T) {
		resp, err := http.Get(callback)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("replayed callback: %d", resp.StatusCode)
		}
	})
	ins := w.installations()
	if len(ins) != 2 || !ins["T0ONE"].HasToken || ins["T0ONE"].TokenExpiresAt == nil || !ins["T0TWO"].HasToken || ins["T0TWO"].TokenExpiresAt != nil {
		t.Fatalf("installations %+v", ins)
	}

	w.ms.Push(modelserver.Step{Text: "hello from the gateway"}, modelserver.Step{Text: "hello from the gateway"})
	m1 := w.fake.Human("T0ONE", "C0ONE", "U0A", "<@"+one.BotUserID+"> hi one", "")
	m2 := w.fake.Human("T0TWO", "C0TWO", "U0B", "<@"+two.BotUserID+"> hi two", "")
	w.team = one
	if code, _ := w.event(fakeslack.Mention(m1)); code != 200 {
		t.Fatalf("mention one: %d", code)
	}
	w.team = two
	if code, _ := w.event(fakeslack.Mention(m2)); code != 200 {
		t.Fatalf("mention two: %d", code)
	}
	r1 := w.waitReply(one, "C0ONE", m1.TS, "hello from the gateway")
	r2 := w.waitReply(two, "C0TWO", m2.TS, "hello from the gateway")
	s1, s2 := w.session("T0ONE", "C0ONE", m1.TS), w.session("T0TWO", "C0TWO", m2.TS)
	if s1 == s2 {
		t.Fatal("two workspaces share a session")
	}
	tokenOf := func(ts string) (string, string) {
		for _, c := range w.fake.Calls("chat.postMessage") {
			if c.Result != nil && c.Result["ts"] == ts {
				return c.Token, c.Team
			}
		}
		t.Fatalf("no post with ts %s", ts)
		return "", ""
	}
	tok1, team1 := tokenOf(r1.TS)
	tok2, team2 := tokenOf(r2.TS)
	if team1 != "T0ONE" || team2 != "T0TWO" || tok1 == tok2 {
		t.Fatalf("replies posted with %s (%s) and %s (%s)", tok1, team1, tok2, team2)
	}

	t.Run("the rotating token was refreshed before use", func(t *testing.T) {
		var installed, refreshed string
		for _, c := range w.fake.Calls("oauth.v2.access") {
			tok, _ := c.Result["access_token"].(string)
			switch {
			case c.Str("grant_type") == "refresh_token" && refreshed == "":
				refreshed = tok
			case c.Str("code") != "" && strings.Contains(tok, "T0ONE"):
				installed = tok
			}
		}
		if installed == "" || refreshed == "" || tok1 != refreshed {
			t.Fatalf("installed %q, refreshed %q, used %q", installed, refreshed, tok1)
		}
		for _, c := range w.fake.Calls("") {
			if c.Token == installed && c.Method != "auth.test" {
				t.Fatalf("the expiring token was used for %s", c.Method)
			}
		}
		exp, err := time.Parse(time.RFC3339, *w.installations()["T0ONE"].TokenExpiresAt)
		if err != nil || time.Until(exp) < 11*time.Hour {
			t.Fatalf("token_expires_at after the refresh: %v %v", exp, err)
		}
	})

	t.Run("no plaintext token at rest", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(w.srv.dataDir, "switchboard.db"))
		if err != nil {
			t.Fatal(err)
		}
		toks := append(w.fake.Tokens("T0ONE"), w.fake.Tokens("T0TWO")...)
		for _, c := range w.fake.Calls("oauth.v2.access") {
			if rt, _ := c.Result["refresh_token"].(string); rt != "" {
				toks = append(toks, rt)
			}
		}
		if len(toks) < 5 {
			t.Fatalf("only %d tokens issued", len(toks))
		}
		for _, tok := range toks {
			if bytes.Contains(raw, []byte(tok)) {
				t.Fatalf("token %s… is in the database in plaintext", tok[:12])
			}
		}
	})

	t.Run("the search tool is offered where the user token allows", func(t *testing.T) {
		reqs := w.ms.Requests()
		var withSearch int
		for _, r := range reqs {
			for _, tool := range r.Tools {
				if tool == "mcp_slack_search_messages" {
					withSearch++
				}
			}
		}
		if withSearch != 1 {
			t.Fatalf("search offered in %d of %d requests", withSearch, len(reqs))
		}
	})

	t.Run("access policy", func(t *testing.T) {
		id := w.installations()["T0TWO"].ID
		code, raw := w.srv.do("POST", "/v1/installations/"+id, map[string]any{"policy": map[string]any{"users": []string{"U0B"}}})
		if code != 200 || !strings.Contains(string(raw), `"users":["U0B"]`) {
			t.Fatalf("set policy: %d %s", code, raw)
		}
		for i := 0; i < 2; i++ {
			m := w.fake.Human("T0TWO", "C0TWO", "U0EVE", "<@"+two.BotUserID+"> let me in", "")
			if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
				t.Fatalf("refused mention: %d", code)
			}
			if list := w.sessionsFor("slack:T0TWO:C0TWO:" + m.TS); len(list) != 0 {
				t.Fatal("a user outside the policy started a session")
			}
		}
		w.fake.WaitFor(t, patience, "the refusal told", func() bool { return len(w.fake.Calls("chat.postEphemeral")) > 0 })
		// The notice is posted after the 200; serve's clean stop waits
		// for that work, so a second notice would be there now.
		if err := w.srv.term(); err != nil {
			t.Fatalf("serve stopped with %v", err)
		}
		w.srv = w.srv.restart()
		if calls := w.fake.Calls("chat.postEphemeral"); len(calls) != 1 || calls[0].Str("user") != "U0EVE" {
			t.Fatalf("ephemeral notices %+v", calls)
		}
	})

	t.Run("uninstall forgets the tokens", func(t *testing.T) {
		w.team = two
		if code, _ := w.event(map[string]any{"type": "app_uninstalled"}); code != 200 {
			t.Fatalf("app_uninstalled: %d", code)
		}
		if in := w.installations()["T0TWO"]; in.HasToken {
			t.Fatalf("tokens kept after app_uninstalled: %+v", in)
		}
		id := w.installations()["T0ONE"].ID
		if code, raw := w.srv.do("DELETE", "/v1/installations/"+id, nil); code != 204 {
			t.Fatalf("delete: %d %s", code, raw)
		}
		if code, _ := w.srv.do("GET", "/v1/installations/"+id, nil); code != 404 {
			t.Fatalf("deleted installation still answers %d", code)
		}
		if !w.fake.Revoked(tok1) {
			t.Fatal("delete did not revoke the token at Slack")
		}
	})
}
