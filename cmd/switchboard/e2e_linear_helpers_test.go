package main_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// linearWorld is a serve child wired to a fake Linear (installed through
// the OAuth flow) and the scripted model.
type linearWorld struct {
	t     *testing.T
	ms    *modelserver.Server
	fake  *fakelinear.Server
	srv   *server
	env   map[string]string
	issue fakelinear.Issue
}

func startLinear(t *testing.T, extra map[string]string, opts ...fakelinear.Option) *linearWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	fake := fakelinear.New(t, opts...)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	linearEnv(env, fake)
	for k, v := range extra {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	w := &linearWorld{t: t, ms: ms, fake: fake, env: env}
	w.issue = fake.SeedIssue(fakelinear.Issue{Title: "Widgets break on Mondays", Desc: "Steps: run it on a Monday."})
	w.srv = startServer(t, t.TempDir(), env)
	w.install()
	return w
}

// linearEnv sets the variables of a Linear OAuth app the fake serves.
func linearEnv(env map[string]string, fake *fakelinear.Server) {
	env["LINEAR_CLIENT_ID"] = fake.ClientID
	env["LINEAR_CLIENT_SECRET"] = fake.ClientSecret
	env["LINEAR_WEBHOOK_SECRET"] = fake.WebhookSecret
	env["LINEAR_API_URL"] = fake.URL()
}

// install runs the OAuth install in a "browser": the gateway's install
// link, Linear's consent page (the fake approves at once), the callback.
func (w *linearWorld) install() {
	w.t.Helper()
	next := w.srv.url + "/oauth/linear/install"
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
	resp, err := http.Get(next)
	if err != nil {
		w.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		w.t.Fatalf("callback %s: %d %s", next, resp.StatusCode, body)
	}
}

// deliver sends a signed webhook; delivery "" keeps the fake's fresh id.
// It returns the status and the delivery id used.
func (w *linearWorld) deliver(body []byte, delivery string) (int, string) {
	w.t.Helper()
	req := w.fake.WebhookRequest(w.srv.url+"/webhooks/linear", body)
	if delivery != "" {
		req.Header.Set("Linear-Delivery", delivery)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, req.Header.Get("Linear-Delivery")
}

// created delivers a created event for a new agent session and returns
// the agent session id.
func (w *linearWorld) created(agentSession string) string {
	w.t.Helper()
	if code, _ := w.deliver(w.fake.CreatedEvent(fakelinear.SessionEvent{SessionID: agentSession, Issue: w.issue}), ""); code != 200 {
		w.t.Fatalf("created: %d", code)
	}
	return agentSession
}

func (w *linearWorld) prompted(agentSession, text, signal string) {
	w.t.Helper()
	if code, _ := w.deliver(w.fake.PromptedEvent(fakelinear.SessionEvent{SessionID: agentSession, Issue: w.issue, Prompt: text, Signal: signal}), ""); code != 200 {
		w.t.Fatalf("prompted: %d", code)
	}
}

func (w *linearWorld) key(agentSession string) string {
	return "linear:" + w.fake.Org.ID + ":" + agentSession
}

func (w *linearWorld) sessionsFor(agentSession string) []sessionState {
	return w.srv.sessionsByKey(w.key(agentSession))
}

// session waits for the one session of an agent session.
func (w *linearWorld) session(agentSession string) string {
	return w.srv.sessionByKey(w.key(agentSession))
}

// activities are the agent session's activities as "type: text".
func (w *linearWorld) activities(agentSession string) []string {
	var out []string
	for _, a := range w.fake.Activities() {
		if a.SessionID != agentSession {
			continue
		}
		text := a.Body
		if a.Type == "action" {
			text = a.Action
			if a.Result != "" {
				text += " → " + a.Result
			}
			if a.Ephemeral {
				text += " (ephemeral)"
			}
		}
		out = append(out, a.Type+": "+text)
	}
	return out
}

// waitActivity waits for an activity of the agent session whose "type:
// text" holds substr.
func (w *linearWorld) waitActivity(agentSession, substr string, d time.Duration) {
	w.t.Helper()
	w.fake.WaitFor(w.t, d, "an activity with "+substr, func() bool { return countHolding(w.activities(agentSession), substr) > 0 })
}

func countHolding(list []string, substr string) int {
	n := 0
	for _, s := range list {
		if strings.Contains(s, substr) {
			n++
		}
	}
	return n
}

// installation is the organization's installation as the API shows it.
func (w *linearWorld) installation() installationView {
	w.t.Helper()
	code, raw := w.srv.do("GET", "/v1/installations?provider=linear", nil)
	if code != 200 {
		w.t.Fatalf("list installations: %d %s", code, raw)
	}
	var page struct {
		Data []installationView `json:"data"`
	}
	mustJSON(w.t, raw, &page)
	for _, in := range page.Data {
		if in.ExternalID == w.fake.Org.ID {
			return in
		}
	}
	w.t.Fatalf("no linear installation for %s in %s", w.fake.Org.ID, raw)
	return installationView{}
}

// modelSawAll reports whether the model's requests so far carried every
// substring.
func modelSawAll(ms *modelserver.Server, subs ...string) bool {
	for _, s := range subs {
		if !modelSaw(ms, s) {
			return false
		}
	}
	return true
}
