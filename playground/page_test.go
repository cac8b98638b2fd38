package playground

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// delivery is one webhook the fake gateway received.
type delivery struct {
	path   string
	header http.Header
	body   []byte
}

// fakeGateway records the webhooks it receives and answers status.
type fakeGateway struct {
	mu     sync.Mutex
	got    []delivery
	status int
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.got = append(g.got, delivery{r.URL.Path, r.Header.Clone(), body})
	status := g.status
	g.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, "signature mismatch", status)
	}
}

func (g *fakeGateway) take() []delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.got
	g.got = nil
	return out
}

// testPage is a page over simulators wired to a fake gateway.
func testPage(t *testing.T) (*httptest.Server, *world, *fakeGateway) {
	t.Helper()
	gw := &fakeGateway{status: http.StatusOK}
	gs := httptest.NewServer(gw)
	t.Cleanup(gs.Close)
	w := newWorld(t, true)
	w.gateway = gs.URL
	pg, err := newPage(w, modelView{Name: ScriptedModel, Scripted: true}, gs.URL+"/console/", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(pg.handler())
	t.Cleanup(srv.Close)
	return srv, w, gw
}

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestActionsDeliverSignedWebhooks: what the person does on the page
// reaches the gateway as the platform would send it, signed with the
// secret the gateway is given.
func TestActionsDeliverSignedWebhooks(t *testing.T) {
	srv, w, gw := testPage(t)
	env := w.env()

	t.Run("a Slack mention", func(t *testing.T) {
		if code, body := postJSON(t, srv.URL+"/api/slack/messages", `{"text":"@switchboard hi"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		got := gw.take()
		if len(got) != 2 {
			t.Fatalf("%d deliveries, want the message and app_mention events", len(got))
		}
		for i, want := range []string{"message", "app_mention"} {
			d := got[i]
			ts, _ := strconv.ParseInt(d.header.Get("X-Slack-Request-Timestamp"), 10, 64)
			if d.path != "/webhooks/slack" || d.header.Get("X-Slack-Signature") != fakeslack.Sign(env["SLACK_SIGNING_SECRET"], time.Unix(ts, 0), d.body) {
				t.Errorf("delivery %d: %s not signed with SLACK_SIGNING_SECRET", i, d.path)
			}
			var ev struct {
				Event struct{ Type, Text, Channel, User string }
			}
			json.Unmarshal(d.body, &ev)
			if ev.Event.Type != want || ev.Event.Text != "<@"+w.team.BotUserID+"> hi" || ev.Event.Channel != slackChannel || ev.Event.User != slackUser {
				t.Errorf("delivery %d: %+v, want %s with the bot's mention", i, ev.Event, want)
			}
		}
		if msgs := w.slack.Channel(slackChannel); len(msgs) != 1 {
			t.Errorf("the channel holds %d messages", len(msgs))
		}
	})
	t.Run("a channel message without a mention", func(t *testing.T) {
		code, body := postJSON(t, srv.URL+"/api/slack/messages", `{"text":"lunch anyone?"}`)
		if code != http.StatusAccepted || !strings.Contains(body, "mentions @switchboard") {
			t.Fatalf("%d %s, want a note that the agent answers mentions", code, body)
		}
		if got := gw.take(); len(got) != 1 {
			t.Fatalf("%d deliveries, want the one message event", len(got))
		}
	})
	t.Run("a thread reply without a mention", func(t *testing.T) {
		root := w.slack.Channel(slackChannel)[0]
		code, body := postJSON(t, srv.URL+"/api/slack/messages", `{"text":"and then?","thread_ts":"`+root.TS+`"}`)
		if code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		if strings.Contains(body, "note") {
			t.Errorf("a reply in a thread got a note: %s", body)
		}
		if got := gw.take(); len(got) != 1 || !bytes.Contains(got[0].body, []byte(`"thread_ts":"`+root.TS+`"`)) {
			t.Fatalf("deliveries %d, want the one message event in the thread", len(got))
		}
	})
	t.Run("the stop reaction", func(t *testing.T) {
		root := w.slack.Channel(slackChannel)[0]
		if code, body := postJSON(t, srv.URL+"/api/slack/reactions", `{"ts":"`+root.TS+`","name":"octagonal_sign"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		got := gw.take()
		var ev struct {
			Event struct {
				Type, User, Reaction string
				Item                 struct{ Channel, TS string }
			}
		}
		if len(got) != 1 || json.Unmarshal(got[0].body, &ev) != nil || ev.Event.Type != "reaction_added" || ev.Event.Reaction != "octagonal_sign" ||
			ev.Event.User != slackUser || ev.Event.Item.Channel != slackChannel || ev.Event.Item.TS != root.TS {
			t.Fatalf("deliveries %d, event %+v, want reaction_added on the thread's first message", len(got), ev.Event)
		}
		if m, _ := w.slack.Message(slackChannel, root.TS); !slices.Contains(m.Reacts, "octagonal_sign") {
			t.Errorf("the message's reactions: %v", m.Reacts)
		}
	})
	t.Run("a pull request comment", func(t *testing.T) {
		if code, body := postJSON(t, srv.URL+"/api/github/comments", `{"body":"@sb-agent look"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		got := gw.take()
		if len(got) != 1 || got[0].path != "/webhooks/github" || got[0].header.Get("X-GitHub-Event") != "issue_comment" ||
			got[0].header.Get("X-Hub-Signature-256") != fakegithub.Sign(env["GITHUB_WEBHOOK_SECRET"], got[0].body) {
			t.Fatalf("deliveries %+v, want one issue_comment signed with GITHUB_WEBHOOK_SECRET", got)
		}
		if cs := w.github.Comments(githubRepo, githubPR); len(cs) != 1 || cs[0].Body != "@sb-agent look" || cs[0].User != githubUser {
			t.Errorf("the pull request's comments: %+v", cs)
		}
	})
	t.Run("a merge request thread and a reply in it", func(t *testing.T) {
		if code, body := postJSON(t, srv.URL+"/api/gitlab/notes", `{"body":"@switchboard look"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		got := gw.take()
		if len(got) != 1 || got[0].path != "/webhooks/gitlab" || got[0].header.Get("X-Gitlab-Event") != "Note Hook" ||
			got[0].header.Get("X-Gitlab-Token") != env["SWITCHBOARD_GITLAB_WEBHOOK_SECRET"] || got[0].header.Get("Idempotency-Key") == "" ||
			!bytes.Contains(got[0].body, []byte(`"note":"@`+gitlabApp+` look"`)) {
			t.Fatalf("deliveries %+v, want one Note Hook with the webhook's secret token", got)
		}
		v := w.snapshot().GitLab
		if len(v.Discussions) != 1 || len(v.Discussions[0].Notes) != 1 || v.Discussions[0].Notes[0].Author != gitlabUser {
			t.Fatalf("the merge request shows %+v", v.Discussions)
		}
		discussion := v.Discussions[0].ID
		if code, body := postJSON(t, srv.URL+"/api/gitlab/notes", `{"body":"and then?","discussion":"`+discussion+`"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		if got := gw.take(); len(got) != 1 || !bytes.Contains(got[0].body, []byte(`"discussion_id":"`+discussion+`"`)) {
			t.Fatalf("%d deliveries, want the reply's Note Hook in the discussion", len(got))
		}
		if d := w.snapshot().GitLab.Discussions; len(d) != 1 || len(d[0].Notes) != 2 {
			t.Errorf("the merge request shows %+v", d)
		}
	})
	t.Run("a delegation and a prompt", func(t *testing.T) {
		issue := w.linear.Issues()[0]
		if code, body := postJSON(t, srv.URL+"/api/linear/delegations", `{"issue":"`+issue.ID+`"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		got := gw.take()
		if len(got) != 1 || got[0].path != "/webhooks/linear" || got[0].header.Get("Linear-Signature") != w.linear.Sign(got[0].body) ||
			w.linear.WebhookSecret != env["LINEAR_WEBHOOK_SECRET"] || !bytes.Contains(got[0].body, []byte(`"action":"created"`)) {
			t.Fatalf("deliveries %+v, want one signed created event", got)
		}
		session := w.snapshot().Linear.Sessions[0]
		if code, body := postJSON(t, srv.URL+"/api/linear/prompts", `{"session":"`+session.ID+`","body":"go on"}`); code != http.StatusAccepted {
			t.Fatalf("%d %s", code, body)
		}
		if got := gw.take(); len(got) != 1 || !bytes.Contains(got[0].body, []byte(`"action":"prompted"`)) {
			t.Fatalf("%d deliveries, want the prompted event", len(got))
		}
		if e := w.snapshot().Linear.Sessions[0].Entries; len(e) != 1 || e[0].Kind != "prompt" || e[0].Body != "go on" {
			t.Errorf("the session shows %+v", e)
		}
	})
}

// TestActionsRefuseBadInput: a clear error, nothing delivered, nothing
// kept; a gateway that refuses is named.
func TestActionsRefuseBadInput(t *testing.T) {
	srv, w, gw := testPage(t)
	tests := []struct {
		name, path, body string
		status           int
		says             string
	}{
		{"an empty message", "/api/slack/messages", `{"text":"  "}`, 400, "text is empty"},
		{"not JSON", "/api/slack/messages", `text=hi`, 400, "invalid"},
		{"an unknown field", "/api/github/comments", `{"comment":"hi"}`, 400, "comment"},
		{"an empty note", "/api/gitlab/notes", `{"body":" "}`, 400, "body is empty"},
		{"a reply in no discussion", "/api/gitlab/notes", `{"body":"hi","discussion":"nope"}`, 404, `no discussion \"nope\"`},
		{"an unknown issue", "/api/linear/delegations", `{"issue":"nope"}`, 404, `no issue \"nope\": not found`},
		{"an unknown session", "/api/linear/prompts", `{"session":"nope","body":"hi"}`, 404, `no agent session \"nope\": not found`},
		{"a reaction to no message", "/api/slack/reactions", `{"ts":"1.2","name":"eyes"}`, 404, "no message 1.2"},
		{"a reaction without a name", "/api/slack/reactions", `{"ts":"1.2"}`, 400, "name is empty"},
		{"a button of no message", "/api/slack/clicks", `{"ts":"1.2","action_id":"stop"}`, 404, "no message 1.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := postJSON(t, srv.URL+tt.path, tt.body)
			if code != tt.status || !strings.Contains(body, tt.says) {
				t.Errorf("%d %s, want %d saying %q", code, body, tt.status, tt.says)
			}
		})
	}
	if got := gw.take(); len(got) != 0 {
		t.Errorf("%d deliveries of bad input", len(got))
	}
	if len(w.slack.Channel(slackChannel)) != 0 || len(w.github.Comments(githubRepo, githubPR)) != 0 || len(w.gitlab.fake.Notes(w.gitlab.mr)) != 0 {
		t.Error("bad input was kept")
	}

	gw.mu.Lock()
	gw.status = http.StatusUnauthorized
	gw.mu.Unlock()
	code, body := postJSON(t, srv.URL+"/api/github/comments", `{"body":"hi"}`)
	if code != http.StatusBadGateway || !strings.Contains(body, "401") || !strings.Contains(body, "signature mismatch") {
		t.Errorf("a refused delivery: %d %s", code, body)
	}
}

// TestGuard: only the page itself, on a loopback name, may act.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		name, method, host, contentType, origin string
		status                                  int
	}{
		{"the page's post", "POST", "127.0.0.1:8081", "application/json", "http://127.0.0.1:8081", 204},
		{"a post without an origin", "POST", "localhost:8081", "application/json", "", 204},
		{"a read on ::1", "GET", "[::1]:8081", "", "", 204},
		{"a rebound name", "GET", "evil.example:8081", "", "", http.StatusMisdirectedRequest},
		{"another site's form", "POST", "127.0.0.1:8081", "text/plain", "https://evil.example", http.StatusUnsupportedMediaType},
		{"another site's fetch", "POST", "127.0.0.1:8081", "application/json", "https://evil.example", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/x", strings.NewReader("{}"))
			r.Host = tt.host
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			guard(ok).ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Errorf("%d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
		})
	}
}
