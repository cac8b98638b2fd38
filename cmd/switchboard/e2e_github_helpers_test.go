package main_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const githubSecret = "gh-webhook-secret-test"

// githubWorld is a serve child wired to a fake GitHub and the scripted
// model.
type githubWorld struct {
	t    testing.TB
	ms   *modelserver.Server
	fake *fakegithub.Server
	srv  *server
	env  map[string]string
}

var deliverySeq atomic.Int64

func startGitHub(t *testing.T, extra map[string]string) *githubWorld {
	t.Helper()
	return startGitHubWith(t, func(*fakegithub.Server) map[string]string { return extra })
}

// startGitHubWith is startGitHub with settings that depend on the fake
// (servers of its own started first).
func startGitHubWith(t *testing.T, settings func(*fakegithub.Server) map[string]string) *githubWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	fake := fakegithub.Start(t)
	extra := settings(fake)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	githubEnv(env, fake)
	for k, v := range extra {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	w := &githubWorld{t: t, ms: ms, fake: fake, env: env}
	w.srv = startServer(t, t.TempDir(), env)
	return w
}

// githubEnv sets the variables of a GitHub App the fake serves.
func githubEnv(env map[string]string, fake *fakegithub.Server) {
	env["GITHUB_APP_ID"] = strconv.FormatInt(fake.AppID, 10)
	env["GITHUB_APP_PRIVATE_KEY"] = string(fake.KeyPEM)
	env["GITHUB_WEBHOOK_SECRET"] = githubSecret
	env["GITHUB_APP_SLUG"] = fake.Slug
	env["GITHUB_API_URL"] = fake.APIURL()
}

// deliver sends a signed webhook and returns the status; delivery "" is
// a fresh id.
func (w *githubWorld) deliver(event, delivery string, payload any, secret string) int {
	w.t.Helper()
	if delivery == "" {
		delivery = "d-" + strconv.FormatInt(deliverySeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		w.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(fakegithub.SignedRequest(w.srv.url+"/webhooks/github", secret, event, delivery, body))
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (w *githubWorld) sessionsFor(key string) []sessionState { return w.srv.sessionsByKey(key) }

// session waits for the one session of an issue or PR.
func (w *githubWorld) session(key string) string { return w.srv.sessionByKey(key) }

// botComments are the app's comments on an issue or PR.
func (w *githubWorld) botComments(repo string, number int) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range w.fake.Comments(repo, number) {
		if c.User == w.fake.Slug+"[bot]" {
			out = append(out, c)
		}
	}
	return out
}

// The payload builders are the fake's (fixtures/fakegithub), under the
// short names the tests use.

const installationID = fakegithub.InstallationID

var (
	ghUser        = fakegithub.UserPayload
	ghRepo        = fakegithub.RepositoryPayload
	issueComment  = fakegithub.IssueCommentEvent
	reviewComment = fakegithub.ReviewCommentEvent
	review        = fakegithub.ReviewEvent
	labeled       = fakegithub.LabeledEvent
)
