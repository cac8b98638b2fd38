package main_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// replicaLeaseSeconds is the replicas' SWITCHBOARD_LEASE_SECONDS: short,
// so that a failover takes seconds, not the default quarter of a minute.
const replicaLeaseSeconds = 3

// replicaMasterKey is the master key every replica of a test shares.
const replicaMasterKey = "e2e-replicas-master-key-0123456789abcdef"

// replicas is two serve children sharing one PostgreSQL database, one
// fake Slack, one fake GitHub and the scripted model, each with a data
// dir and a port of its own: a deployment of two replicas behind a load
// balancer, as the platforms and the model see it.
type replicas struct {
	t        testing.TB
	ms       *modelserver.Server
	modelURL string
	slack    *fakeslack.Server
	team     fakeslack.Team
	bot      string // the team's bot token
	github   *fakegithub.Server
	srv      [2]*server
}

// startReplicas starts the two replicas on a new database; extra
// overrides their environment.
func startReplicas(t testing.TB, extra map[string]string) *replicas {
	t.Helper()
	r := newPlatforms(t)
	dsn := pgtest.DSN(t)
	for i := range r.srv {
		env := r.env(i)
		env["SWITCHBOARD_STORE"] = dsn
		env["SWITCHBOARD_MASTER_KEY"] = replicaMasterKey
		env["SWITCHBOARD_LEASE_SECONDS"] = strconv.Itoa(replicaLeaseSeconds)
		for k, v := range extra {
			env[k] = v
		}
		r.srv[i] = startServer(t, t.TempDir(), env)
	}
	return r
}

// newPlatforms starts the fakes and the model the replicas share, and no
// replica yet.
func newPlatforms(t testing.TB) *replicas {
	t.Helper()
	ms, hs := modelserver.Start(t)
	r := &replicas{t: t, ms: ms, modelURL: hs.URL, slack: fakeslack.Start(t), github: fakegithub.Start(t)}
	r.bot = r.slack.AddTeam(fakeslack.Team{ID: "T0REP", Name: "Replicas"})
	tm, ok := r.slack.Team("T0REP")
	if !ok {
		t.Fatal("fake slack lost its team")
	}
	r.team = tm
	r.github.SetPermission("alice", "write")
	return r
}

// env is replica i's environment for the model and the platforms.
func (r *replicas) env(i int) map[string]string {
	env := modelEnv(r.modelURL, modelserver.FormatAnthropic)
	// The model key tells which replica made a model request.
	env["ANTHROPIC_API_KEY"] = replicaKey(i)
	env["SLACK_SIGNING_SECRET"] = slackSecret
	env["SLACK_BOT_TOKEN"] = r.bot
	env["SLACK_API_URL"] = r.slack.APIURL()
	env["GITHUB_APP_ID"] = strconv.FormatInt(r.github.AppID, 10)
	env["GITHUB_APP_PRIVATE_KEY"] = string(r.github.KeyPEM)
	env["GITHUB_WEBHOOK_SECRET"] = githubSecret
	env["GITHUB_APP_SLUG"] = r.github.Slug
	env["GITHUB_API_URL"] = r.github.APIURL()
	return env
}

func replicaKey(i int) string { return "replica-" + string(rune('a'+i)) + "-key" }

// name is how reports call replica i.
func replicaName(i int) string { return string(rune('A' + i)) }

// ranBy is the replica that made a model request.
func (r *replicas) ranBy(req modelserver.Request) int {
	r.t.Helper()
	for i := range r.srv {
		if req.Header.Get("X-Api-Key") == replicaKey(i) {
			return i
		}
	}
	r.t.Fatalf("a model request from no replica: %v", req.Header)
	return -1
}

// slackOn is the Slack world as seen through replica i: its events go
// to that replica.
func (r *replicas) slackOn(i int) *slackWorld {
	return &slackWorld{t: r.t, ms: r.ms, fake: r.slack, team: r.team, srv: r.srv[i], env: r.srv[i].env}
}

// githubOn is the GitHub world as seen through replica i.
func (r *replicas) githubOn(i int) *githubWorld {
	return &githubWorld{t: r.t, ms: r.ms, fake: r.github, srv: r.srv[i], env: r.srv[i].env}
}

// mention posts a new top-level mention of the bot through replica i and
// returns it.
func (r *replicas) mention(i int, channel, text string) fakeslack.Message {
	r.t.Helper()
	m := r.slack.Human(r.team.ID, channel, "U0ALICE", "<@"+r.team.BotUserID+"> "+text, "")
	if code, took := r.slackOn(i).event(fakeslack.Mention(m)); code != 200 {
		r.t.Fatalf("mention through replica %s: %d in %v", replicaName(i), code, took)
	}
	return m
}

// threadKey is the origin key of a Slack thread of the test's team.
func (r *replicas) threadKey(channel, ts string) string {
	return "slack:" + r.team.ID + ":" + channel + ":" + ts
}

// answers are the bot's messages in a thread holding text.
func (r *replicas) answers(channel, thread, text string) int {
	return len(r.slackOn(0).botReplies(r.team, channel, thread, text))
}

// settledAnswers waits until the thread's turns are over on both
// replicas' sinks (each cleared its status of the thread last) and
// returns how often text was posted there. The status is cleared after
// the answer is rendered, so a second post of the answer would have been
// made by then.
func (r *replicas) settledAnswers(channel, thread, text string) int {
	r.t.Helper()
	r.slack.WaitFor(r.t, patience, "the thread's status cleared", func() bool {
		var last fakeslack.Call
		found := false
		for _, c := range r.slack.Calls("assistant.threads.setStatus") {
			if c.Str("thread_ts") == thread && c.Str("channel_id") == channel {
				last, found = c, true
			}
		}
		return found && last.Str("status") == ""
	})
	return r.answers(channel, thread, text)
}

// waitModelRequest waits for the model's n-th request (1-based) and
// returns it.
func (r *replicas) waitModelRequest(n int) modelserver.Request {
	r.t.Helper()
	waitRequests(r.t, r.ms, n)
	return r.ms.Requests()[n-1]
}

// streamed collects a session's SSE stream as events, in the order they
// came, until want events arrived or patience ran out.
func streamed(t testing.TB, lines <-chan string, want int) []event {
	t.Helper()
	var out []event
	var id, typ string
	timeout := time.After(patience)
	for len(out) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended after %d events: %v", len(out), types(out))
			}
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "event: "):
				typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				var e event
				if err := json.Unmarshal([]byte(line[6:]), &e); err != nil {
					t.Fatalf("stream data %s: %v", line, err)
				}
				if e.Type != typ || strconv.FormatUint(e.Seq, 10) != id {
					t.Fatalf("SSE framing: id %s event %s data %s", id, typ, line)
				}
				out = append(out, e)
			}
		case <-timeout:
			t.Fatalf("the stream sent %d of %d events: %v", len(out), want, types(out))
		}
	}
	return out
}
