package playground

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/tb"
)

// The simulated places and the person the page speaks for.
const (
	slackChannel     = "C0GENERAL"
	slackChannelName = "general"
	slackUser        = "U0YOU"
	slackUserName    = "you"
	githubRepo       = "acme/widgets"
	githubPR         = 1
	githubHead       = "3f2a9c1d5e7b8a0c4d6e8f1a2b3c5d7e9f0a1b2c"
	githubUser       = "octocat"
)

// The pull request's one change.
const (
	widgetPatch = "@@ -40,3 +40,3 @@ func Make(day time.Weekday) (*Widget, error) {\n-\tif day == time.Monday {\n+\tif day == time.Monday && !fixed {\n \t\treturn nil, errMonday\n"
	widgetFile  = "package widget\n\n// Make makes a widget, on most days.\nfunc Make(day time.Weekday) (*Widget, error) {\n\tif day == time.Monday && !fixed {\n\t\treturn nil, errMonday\n\t}\n\treturn &Widget{}, nil\n}\n"
)

// world is the simulated platforms, wired to one gateway.
type world struct {
	slack       *fakeslack.Server
	team        fakeslack.Team
	slackBot    string // the workspace's bot token
	github      *fakegithub.Server
	gitlab      *gitlabWorld
	linear      *fakelinear.Server
	model       *modelserver.Server // the demo model; nil with a real one
	modelURL    string
	slackSecret string
	githubHook  string // GitHub's webhook secret

	gateway string // the gateway's URL, set once it serves
	client  *http.Client

	mu        sync.Mutex
	delegated []delegation
	prompts   []prompt
}

// delegation is a Linear agent session the person started.
type delegation struct {
	Session, Issue string
	At             time.Time
}

// prompt is what the person wrote to a Linear agent session.
type prompt struct {
	Session, Body string
	Stop          bool
	At            time.Time
}

// newWorld starts the simulators, which end with t; scripted adds the
// demo model.
func newWorld(t tb.TB, scripted bool) *world {
	w := &world{slackSecret: secret(), githubHook: secret(), client: &http.Client{Timeout: time.Minute}}
	w.slack = fakeslack.Start(t)
	w.slackBot = w.slack.AddTeam(fakeslack.Team{ID: "T0PLAY", Name: "Playground", Domain: "playground"})
	w.team, _ = w.slack.Team("T0PLAY")
	w.slack.AddUser(fakeslack.User{ID: slackUser, TeamID: "T0PLAY", Name: slackUserName, RealName: "You", TZ: "UTC"})

	w.github = fakegithub.Start(t)
	w.github.AddInstallation(fakegithub.InstallationID, "acme")
	w.github.SetPermission(githubUser, "write")
	w.github.AddIssue(githubRepo, fakegithub.Issue{Number: githubPR, Title: "Widgets break on Mondays", Body: "Steps: run it on a Monday.", User: "carol",
		Pull: &fakegithub.Pull{HeadRef: "fix", HeadSHA: githubHead, BaseRef: "main", BaseSHA: strings.Repeat("0", 40),
			Files: []fakegithub.File{{Path: "widget.go", Status: "modified", Additions: 1, Deletions: 1, Patch: widgetPatch}}}})
	w.github.SetFile(githubRepo, githubHead, "widget.go", widgetFile)

	w.gitlab = newGitLab(t)

	w.linear = fakelinear.New(t, fakelinear.WithoutSchema())
	w.linear.SeedIssue(fakelinear.Issue{Title: "Widgets break on Mondays", Desc: "Steps: run it on a Monday. Expected: a widget. Got: a stack trace."})
	w.linear.SeedIssue(fakelinear.Issue{Title: "Add a dark mode to the dashboard", Desc: "Follow the system setting; keep contrast readable."})

	if scripted {
		ms, hs := modelserver.Start(t, func(s *modelserver.Server) { s.Default = demoAnswer })
		w.model, w.modelURL = ms, modelserver.OpenAIBaseURL(hs.URL)
	}
	return w
}

// secret is a random webhook secret.
func secret() string { return rand.Text() }

// env is the gateway's variables for the simulators (and the demo model).
func (w *world) env() map[string]string {
	env := map[string]string{
		"SLACK_SIGNING_SECRET":   w.slackSecret,
		"SLACK_BOT_TOKEN":        w.slackBot,
		"SLACK_API_URL":          w.slack.APIURL(),
		"GITHUB_APP_ID":          strconv.FormatInt(w.github.AppID, 10),
		"GITHUB_APP_PRIVATE_KEY": string(w.github.KeyPEM),
		"GITHUB_APP_SLUG":        w.github.Slug,
		"GITHUB_WEBHOOK_SECRET":  w.githubHook,
		"GITHUB_API_URL":         w.github.APIURL(),
		"LINEAR_CLIENT_ID":       w.linear.ClientID,
		"LINEAR_CLIENT_SECRET":   w.linear.ClientSecret,
		"LINEAR_WEBHOOK_SECRET":  w.linear.WebhookSecret,
		"LINEAR_API_URL":         w.linear.URL(),
	}
	maps.Copy(env, w.gitlab.env())
	if w.model != nil {
		env["SWITCHBOARD_MODEL"] = ScriptedModel
		env["OPENAI_BASE_URL"] = w.modelURL
	}
	return env
}

// deliver sends a signed webhook to the gateway; an answer other than 2xx
// is an error that says what the gateway said.
func (w *world) deliver(req *http.Request) error {
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("deliver to the gateway: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("the gateway answered %s: %s", resp.Status, body)
	}
	return nil
}

// mentionWord is how a person names the bot on the page.
var mentionWord = regexp.MustCompile(`(?i)@switchboard\b`)

// slackPost writes text as the person, in the channel or in the thread
// of threadTS, and delivers what Slack would: the message event, and the
// app_mention when it names the bot (the gateway dedupes the pair).
//
// Slack sends a message that mentions the app twice, as a message and
// as an app_mention. A message in the channel that mentions no one is
// for the people there: the agent does not see it, which note tells
// the person ("" otherwise).
func (w *world) slackPost(text, threadTS string) (note string, err error) {
	text = mentionWord.ReplaceAllString(text, "<@"+w.team.BotUserID+">")
	m := w.slack.Human(w.team.ID, slackChannel, slackUser, text, threadTS)
	if err := w.slackEvent(fakeslack.MessageEvent(m, "channel")); err != nil {
		return "", err
	}
	if strings.Contains(text, "<@"+w.team.BotUserID+">") {
		return "", w.slackEvent(fakeslack.Mention(m))
	}
	if threadTS == "" {
		note = unmentionedNote
	}
	return note, nil
}

// unmentionedNote says why a channel message got no answer.
const unmentionedNote = "The agent answers a message that mentions @switchboard, and the replies in its threads; this one stays between the people in #" + slackChannelName + "."

func (w *world) slackEvent(inner map[string]any) error {
	body := fakeslack.Event{Team: w.team, Inner: inner}.JSON()
	return w.deliver(fakeslack.SignedRequest(w.gateway+"/webhooks/slack", w.slackSecret, time.Now(), "application/json", body))
}

// slackReact reacts to a message as the person; :octagonal_sign: on a
// thread's first message stops the agent's turn there.
func (w *world) slackReact(ts, name string) error {
	if !w.slack.React(slackChannel, ts, name) {
		return fmt.Errorf("no message %s in #%s: %w", ts, slackChannelName, core.ErrNotFound)
	}
	return w.slackEvent(fakeslack.ReactionAdded(slackUser, name, slackChannel, ts))
}

// slackClick presses a button of a message the bot posted.
func (w *world) slackClick(ts, actionID, value string) error {
	m, ok := w.slack.Message(slackChannel, ts)
	if !ok {
		return fmt.Errorf("no message %s in #%s: %w", ts, slackChannelName, core.ErrNotFound)
	}
	body := fakeslack.InteractionBody(fakeslack.BlockAction(w.team, slackUser, m, actionID, value))
	return w.deliver(fakeslack.SignedRequest(w.gateway+"/webhooks/slack/interactivity", w.slackSecret, time.Now(), "application/x-www-form-urlencoded", body))
}

// githubComment comments on the pull request as the person.
func (w *world) githubComment(body string) error {
	id := w.github.AddComment(githubRepo, githubPR, false, githubUser, body)
	payload, err := json.Marshal(fakegithub.IssueCommentEvent(githubPR, true, id, githubUser, body))
	if err != nil {
		return err
	}
	return w.deliver(fakegithub.SignedRequest(w.gateway+"/webhooks/github", w.githubHook, "issue_comment", "pg-"+rand.Text(), payload))
}

// linearDelegate delegates an issue to the agent: a new agent session.
func (w *world) linearDelegate(issueID string) error {
	issue, ok := w.linear.Issue(issueID)
	if !ok {
		return fmt.Errorf("no issue %q: %w", issueID, core.ErrNotFound)
	}
	session := uuid()
	w.mu.Lock()
	w.delegated = append(w.delegated, delegation{Session: session, Issue: issue.ID, At: time.Now()})
	w.mu.Unlock()
	return w.deliver(w.linear.WebhookRequest(w.gateway+"/webhooks/linear", w.linear.CreatedEvent(fakelinear.SessionEvent{SessionID: session, Issue: issue})))
}

// linearPrompt writes to an agent session, or stops it.
func (w *world) linearPrompt(session, text string, stop bool) error {
	w.mu.Lock()
	var issueID string
	for _, d := range w.delegated {
		if d.Session == session {
			issueID = d.Issue
		}
	}
	if issueID != "" {
		w.prompts = append(w.prompts, prompt{Session: session, Body: text, Stop: stop, At: time.Now()})
	}
	w.mu.Unlock()
	issue, ok := w.linear.Issue(issueID)
	if !ok {
		return fmt.Errorf("no agent session %q: %w", session, core.ErrNotFound)
	}
	signal := ""
	if stop {
		signal = "stop"
	}
	return w.deliver(w.linear.WebhookRequest(w.gateway+"/webhooks/linear", w.linear.PromptedEvent(fakelinear.SessionEvent{SessionID: session, Issue: issue, Prompt: text, Signal: signal})))
}

// uuid is a random version 4 UUID, as Linear's ids are.
func uuid() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// installLinear installs the app in the simulated Linear workspace as an
// admin would: the gateway's install link, Linear's consent (the
// simulator approves), the callback.
func (w *world) installLinear(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.gateway+"/oauth/linear/install", nil)
	if err != nil {
		return err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("install in the simulated Linear: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("install in the simulated Linear: %s: %s", resp.Status, body)
	}
	return nil
}
