package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// fakeInstallations is the /v1 API of installations, agents and
// deliveries as the console calls it, speaking the real handlers' JSON.
type fakeInstallations struct {
	mu        sync.Mutex
	list      []core.Installation
	agents    []core.Agent
	dead      []core.Delivery
	deadFails bool
	updates   []string // bodies of POST /v1/installations/{id}
	deletes   []string // ids deleted
	refuse    string   // the next update's refusal message, if any
}

// register mounts the fake endpoints on the env's API.
func (f *fakeInstallations) register(mux *http.ServeMux) {
	find := func(id string) int {
		return slices.IndexFunc(f.list, func(in core.Installation) bool { return in.ID == id })
	}
	mux.HandleFunc("GET /v1/installations", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		web.WriteJSON(w, http.StatusOK, web.Page[core.Installation]{Data: append([]core.Installation{}, f.list...)})
	})
	mux.HandleFunc("GET /v1/installations/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		i := find(r.PathValue("id"))
		if i < 0 {
			apiError(w, 404, "not_found", fmt.Sprintf("installation %q not found", r.PathValue("id")))
			return
		}
		web.WriteJSON(w, http.StatusOK, f.list[i])
	})
	mux.HandleFunc("POST /v1/installations/{id}", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.updates = append(f.updates, string(raw))
		if f.refuse != "" {
			apiError(w, 400, "invalid_request", f.refuse)
			f.refuse = ""
			return
		}
		var b struct {
			Agent  *string            `json:"agent"`
			Policy *core.AccessPolicy `json:"policy"`
		}
		_ = json.Unmarshal(raw, &b)
		i := find(r.PathValue("id"))
		if b.Agent != nil {
			f.list[i].Agent = *b.Agent
		}
		if b.Policy != nil {
			f.list[i].Policy = *b.Policy
		}
		web.WriteJSON(w, http.StatusOK, f.list[i])
	})
	mux.HandleFunc("DELETE /v1/installations/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		i := find(r.PathValue("id"))
		f.deletes = append(f.deletes, r.PathValue("id"))
		f.list = slices.Delete(f.list, i, i+1)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		web.WriteJSON(w, http.StatusOK, web.Page[core.Agent]{Data: f.agents})
	})
	// Dead deliveries in pages of the limit asked, after the cursor.
	mux.HandleFunc("GET /v1/deliveries", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		q := r.URL.Query()
		if f.deadFails {
			apiError(w, 500, "internal", "store down")
			return
		}
		if q.Get("state") != "dead" {
			apiError(w, 400, "invalid_request", "want state=dead in this test")
			return
		}
		limit, _ := strconv.Atoi(q.Get("limit"))
		var page web.Page[core.Delivery]
		for _, d := range f.dead {
			if d.ID > q.Get("after") {
				if len(page.Data) == limit {
					page.HasMore = true
					break
				}
				page.Data = append(page.Data, d)
			}
		}
		web.WriteJSON(w, http.StatusOK, page)
	})
}

func (f *fakeInstallations) sent() (updates, deletes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.updates...), append([]string{}, f.deletes...)
}

var t0 = time.Date(2030, 5, 6, 7, 0, 0, 0, time.UTC)

func installations() []core.Installation {
	soon, past := core.NewTime(t0.Add(3*time.Hour)), core.NewTime(t0.Add(-time.Hour))
	return []core.Installation{
		{ID: "ins_1", Provider: "slack", ExternalID: "T0ONE", Name: "One", Agent: "agt_2", Policy: core.AccessPolicy{Channels: []string{"C1"}},
			HasToken: true, TokenExpiresAt: &soon, CreatedAt: core.NewTime(t0), UpdatedAt: core.NewTime(t0)},
		{ID: "ins_2", Provider: "slack", ExternalID: "T0TWO", CreatedAt: core.NewTime(t0), UpdatedAt: core.NewTime(t0)},
		{ID: "ins_3", Provider: "github", ExternalID: "42", Name: "octo-org", Metadata: map[string]string{"status": "suspended"},
			CreatedAt: core.NewTime(t0), UpdatedAt: core.NewTime(t0)},
		{ID: "ins_4", Provider: "linear", ExternalID: "org-1", Name: "Acme", HasToken: true, TokenExpiresAt: &past,
			Policy: core.AccessPolicy{Users: []string{"u-1", "u-2"}}, CreatedAt: core.NewTime(t0), UpdatedAt: core.NewTime(t0)},
	}
}

func agents() []core.Agent {
	return []core.Agent{{ID: "agt_1", Name: "default", Version: 1}, {ID: "agt_2", Name: "triage", Version: 3}}
}

// fakeContainers is the sandbox backend's list.
type fakeContainers struct {
	list []console.Container
	err  error
}

func (f fakeContainers) Containers(context.Context) ([]console.Container, error) {
	return f.list, f.err
}

// installEnv is an env whose console has cfg's platforms and containers
// and the fake API of installations.
func installEnv(t *testing.T, mod func(*console.Config)) (*env, *fakeInstallations) {
	t.Helper()
	e := newEnv(t, "")
	cfg := console.Config{AdminToken: token, Now: e.clock.Now, Heartbeat: time.Millisecond, Platforms: shipped(nil)}
	if mod != nil {
		mod(&cfg)
	}
	h, err := console.New(e.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mux = http.NewServeMux()
	h.Register(e.mux, adminOnly(token, e.api))
	f := &fakeInstallations{list: installations(), agents: agents()}
	f.register(e.api)
	return e, f
}

func contains(t *testing.T, body string, want, wantNot []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	for _, w := range wantNot {
		if strings.Contains(body, w) {
			t.Errorf("the page has %q", w)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

func TestInstallationsPage(t *testing.T) {
	tests := []struct {
		name      string
		platforms []console.Platform
		empty     bool
		want      []string
		wantNot   []string
	}{
		{
			name:      "slack installs, github has no app, linear is off",
			platforms: shipped(map[string]bool{"slack": true, "github": false}),
			want: []string{
				`<a class="button" id="install-slack" href="../oauth/slack/install">Install Slack</a>`,
				`id="setup-github"`, `<a id="setup-flow-github" href="../oauth/github/manifest">Create the GitHub App</a>`,
				`id="setup-linear"`, "LINEAR_CLIENT_ID",
				`<tr data-installation="ins_1">`, `<td>triage</td>`, "channels <code>C1</code>",
				`<span class="health" data-ok="true">Token valid</span>`, `(expires <time datetime="2030-05-06T10:00:00Z">`,
				`<code>T0TWO</code>`, `<span class="dim">default</span>`, "No token: the app was uninstalled",
				"Suspended on GitHub", "users <code>u-1</code>, <code>u-2</code>", "Token expired and not renewed",
				`<a id="edit-ins_1" href="installations/ins_1">`,
			},
			wantNot: []string{`id="install-github"`, `id="install-linear"`, `id="no-installations"`, `id="setup-slack"`},
		},
		{
			name:      "every platform installs, nothing installed yet",
			platforms: shipped(map[string]bool{"slack": true, "github": true, "linear": true}),
			empty:     true,
			want:      []string{`id="install-slack"`, `href="../oauth/github/install"`, `href="../oauth/linear/install"`, `id="no-installations"`},
			wantNot:   []string{`id="setup-`, `<table id="installations">`},
		},
		{
			name:      "slack with a bot token only",
			platforms: shipped(nil),
			want:      []string{`id="setup-slack"`, "Slack is off", "GitHub is off"},
			wantNot:   []string{`class="button"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := installEnv(t, func(c *console.Config) { c.Platforms = tt.platforms })
			if tt.empty {
				f.list = nil
			}
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/installations", cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			contains(t, rec.Body.String(), tt.want, tt.wantNot)
		})
	}
	t.Run("slack without an install flow", func(t *testing.T) {
		e, _ := installEnv(t, func(c *console.Config) { c.Platforms = shipped(map[string]bool{"slack": false}) })
		c, _ := e.signIn()
		body := e.do(req{method: "GET", path: "/console/installations", cookie: c}).Body.String()
		contains(t, body, []string{`id="setup-slack"`, "one workspace with SLACK_BOT_TOKEN"}, []string{`id="install-slack"`})
	})
}

func TestInstallationEdit(t *testing.T) {
	tests := []struct {
		name       string
		form       url.Values
		refuse     string
		wantStatus int
		wantBody   string // the JSON posted to the API
		want       []string
	}{
		{
			name:       "bind another agent and restrict the channels",
			form:       url.Values{"agent": {"agt_1"}, "channels": {"C1, C2\nC3"}, "users": {""}},
			wantStatus: http.StatusSeeOther,
			wantBody:   `{"agent":"agt_1","policy":{"channels":["C1","C2","C3"],"users":[]}}`,
		},
		{
			name:       "unbind, everyone may trigger it",
			form:       url.Values{"agent": {""}, "channels": {""}, "users": {" "}},
			wantStatus: http.StatusSeeOther,
			wantBody:   `{"agent":"","policy":{"channels":[],"users":[]}}`,
		},
		{
			name:       "an agent refused goes under the agent field",
			form:       url.Values{"agent": {"agt_gone"}, "channels": {"C9"}},
			refuse:     `agent "agt_gone" not found`,
			wantStatus: http.StatusBadRequest,
			wantBody:   `{"agent":"agt_gone","policy":{"channels":["C9"],"users":[]}}`,
			want: []string{`aria-describedby="agent-error"`, `<p class="field-error" id="agent-error" role="alert">agent &#34;agt_gone&#34; not found</p>`,
				`<textarea id="channels" name="channels" rows="3" aria-describedby="policy-help">C9</textarea>`},
		},
		{
			name:       "a policy refused goes under the policy",
			form:       url.Values{"agent": {"agt_2"}, "users": {"U1"}},
			refuse:     "policy lists may not hold empty strings",
			wantStatus: http.StatusBadRequest,
			wantBody:   `{"agent":"agt_2","policy":{"channels":[],"users":["U1"]}}`,
			want:       []string{`id="policy-error" role="alert">policy lists may not hold empty strings`, `<option value="agt_2" selected>triage (agt_2)</option>`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := installEnv(t, nil)
			f.refuse = tt.refuse
			c, csrf := e.signIn()
			tt.form.Set("csrf", csrf)
			rec := e.do(req{method: "POST", path: "/console/installations/ins_1", cookie: c, form: tt.form})
			if rec.Code != tt.wantStatus {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if rec.Code == http.StatusSeeOther && rec.Header().Get("Location") != "../installations" {
				t.Fatalf("redirect to %q", rec.Header().Get("Location"))
			}
			updates, _ := f.sent()
			if len(updates) != 1 {
				t.Fatalf("%d updates", len(updates))
			}
			var got, want any
			_ = json.Unmarshal([]byte(updates[0]), &got)
			_ = json.Unmarshal([]byte(tt.wantBody), &want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("posted %s, want %s", updates[0], tt.wantBody)
			}
			contains(t, rec.Body.String(), tt.want, nil)
		})
	}

	t.Run("the page shows the installation and its form", func(t *testing.T) {
		e, _ := installEnv(t, nil)
		c, _ := e.signIn()
		rec := e.do(req{method: "GET", path: "/console/installations/ins_1", cookie: c})
		contains(t, rec.Body.String(), []string{
			`<h1 id="installation-heading">Slack · One</h1>`, `<a href="../installations">Installations</a>`,
			`<form class="stack" id="installation-form" method="post" action="../installations/ins_1">`,
			`<option value="agt_2" selected>`, `<option value="">the agent named default</option>`,
			`<textarea id="channels" name="channels" rows="3" aria-describedby="policy-help">C1</textarea>`,
			`action="../installations/ins_1/uninstall"`, `id="confirm-uninstall" name="confirm" value="yes"`,
		}, []string{"field-error"})
		if rec.Code != http.StatusOK {
			t.Fatal(rec.Code)
		}
	})
	t.Run("without the form's token nothing is sent", func(t *testing.T) {
		e, f := installEnv(t, nil)
		c, _ := e.signIn()
		rec := e.do(req{method: "POST", path: "/console/installations/ins_1", cookie: c, form: url.Values{"agent": {"agt_1"}}})
		if updates, _ := f.sent(); rec.Code != http.StatusForbidden || len(updates) != 0 {
			t.Fatalf("%d with %d updates", rec.Code, len(updates))
		}
	})
	t.Run("a missing installation", func(t *testing.T) {
		e, _ := installEnv(t, nil)
		c, _ := e.signIn()
		if rec := e.do(req{method: "GET", path: "/console/installations/ins_nope", cookie: c}); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "No such installation") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})
}

func TestUninstall(t *testing.T) {
	tests := []struct {
		name        string
		confirm     string
		wantStatus  int
		wantDeletes []string
	}{
		{"without the confirmation nothing happens", "", http.StatusUnprocessableEntity, nil},
		{"a wrong confirmation value nothing happens", "on", http.StatusUnprocessableEntity, nil},
		{"with it the installation is deleted", "yes", http.StatusSeeOther, []string{"ins_3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := installEnv(t, nil)
			c, csrf := e.signIn()
			form := url.Values{"csrf": {csrf}}
			if tt.confirm != "" {
				form.Set("confirm", tt.confirm)
			}
			rec := e.do(req{method: "POST", path: "/console/installations/ins_3/uninstall", cookie: c, form: form})
			if rec.Code != tt.wantStatus {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if _, deletes := f.sent(); !slices.Equal(deletes, tt.wantDeletes) {
				t.Fatalf("deleted %v, want %v", deletes, tt.wantDeletes)
			}
			if rec.Code == http.StatusSeeOther {
				if rec.Header().Get("Location") != "../../installations" {
					t.Fatalf("redirect to %q", rec.Header().Get("Location"))
				}
				body := e.do(req{method: "GET", path: "/console/installations", cookie: c}).Body.String()
				contains(t, body, nil, []string{"ins_3"})
				return
			}
			contains(t, rec.Body.String(), []string{`<p class="field-error" id="confirm-error" role="alert">Tick the box to confirm`,
				`aria-invalid="true" aria-describedby="confirm-error"`, "GitHub has no call"}, nil)
		})
	}
}

func deadDelivery(i int) core.Delivery {
	at := core.NewTime(t0.Add(time.Duration(i) * time.Minute))
	return core.Delivery{ID: fmt.Sprintf("dlv_%04d", i), DestinationID: "dst_1", SessionID: "ses_1", EventID: fmt.Sprintf("evt_%d", i),
		EventType: "session.status_idle", State: core.DeliveryDead, AttemptCount: 2,
		Attempts: []core.Attempt{{At: at, StatusCode: 0, Error: "dial refused"}, {At: at, StatusCode: 503}}, CreatedAt: at, UpdatedAt: at}
}

func TestOverviewInstallationsDeliveriesSandboxes(t *testing.T) {
	created := time.Date(2030, 5, 6, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		containers console.Containers
		dead       int
		deadFails  bool
		want       []string
		wantNot    []string
	}{
		{
			name: "installations, dead deliveries over two pages, containers",
			containers: fakeContainers{list: []console.Container{
				{SessionID: "ses_9", Name: "switchboard-sbx-ses_9", ID: "0123456789abcdef0123", State: "running", Status: "Up 5 minutes", Created: created},
				{SessionID: "ses_8", Name: "switchboard-sbx-ses_8", ID: "fedcba9876543210", State: "exited", Status: "Exited (0) 2 hours ago", Created: created},
			}},
			dead: 1003,
			want: []string{
				`<p id="installations-summary">4 installed, <strong>3 need attention</strong>`,
				`<a href="installations/ins_1">Slack · One</a>: <span class="health" data-ok="true">Token valid</span>`,
				`<a href="installations/ins_2">Slack · T0TWO</a>`,
				`<strong>1003</strong> deliveries were given up on`, `<a href="webhooks#dead">See them on Webhooks</a>`,
				`<code>dlv_1002</code>`, `<code>dlv_0998</code>`, "HTTP 503",
				`<p id="sandboxes-summary">2 containers, 1 running`,
				`<tr data-session="ses_9">`, `<code>0123456789ab</code>`, `<span class="state" data-state="exited">exited</span>`,
				`<time datetime="2030-05-06T06:00:00Z">`,
			},
			wantNot: []string{`dlv_0997`, `id="sandboxes-off"`, `id="no-dead"`, `id="dead-error"`},
		},
		{
			name: "no sandbox backend, nothing dead",
			want: []string{`id="sandboxes-off"`, `id="no-dead"`},
		},
		{
			name:       "the engine and the deliveries fail: the rest still shows",
			containers: fakeContainers{err: errors.New("engine gone")},
			deadFails:  true,
			want:       []string{`id="sandboxes-error"`, `id="dead-error"`, `id="installations-summary"`, `id="no-sessions"`},
			wantNot:    []string{"store down"},
		},
		{
			name:       "an empty engine",
			containers: fakeContainers{},
			dead:       1,
			want:       []string{`id="no-sandboxes"`, `<strong>1</strong> delivery was given up on`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := installEnv(t, func(c *console.Config) { c.Containers = tt.containers })
			for i := range tt.dead {
				f.dead = append(f.dead, deadDelivery(i))
			}
			f.deadFails = tt.deadFails
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/", cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			contains(t, rec.Body.String(), tt.want, tt.wantNot)
		})
	}
	t.Run("no installations", func(t *testing.T) {
		e, f := installEnv(t, nil)
		f.list = nil
		c, _ := e.signIn()
		contains(t, e.do(req{method: "GET", path: "/console/", cookie: c}).Body.String(), []string{`id="no-installations"`, `href="installations"`}, nil)
	})
}

// TestInstallationsAppSetup: a platform whose app is created by hand
// shows its checklist (open while something is missing), its manifest
// escaped, with a copy button the script reveals, and the command that
// prints the same; a manifest that cannot be made says why.
func TestInstallationsAppSetup(t *testing.T) {
	platforms := shipped(map[string]bool{"slack": true})
	platforms[0].App = &console.AppSetup{Command: "switchboard slack manifest --public-url https://x.example",
		Manifest: "display_information:\n  name: <switchboard>\n", Steps: []string{"Paste the manifest."},
		Checklist: []console.Check{{Text: "SLACK_SIGNING_SECRET is set", Done: true}, {Text: "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set, or SLACK_BOT_TOKEN", Fix: "copy the Client ID"}}}
	platforms[2].App = &console.AppSetup{Command: "switchboard linear app", Problem: "the application needs the gateway's public URL",
		Checklist: []console.Check{{Text: "LINEAR_CLIENT_ID is set", Done: true}}}
	e, _ := installEnv(t, func(c *console.Config) { c.Platforms = platforms })
	c, _ := e.signIn()
	body := e.do(req{method: "GET", path: "/console/installations", cookie: c}).Body.String()
	contains(t, body, []string{
		`<details class="app-setup" id="app-slack" open>`, "Create the Slack app by hand (1 still missing)",
		`<li data-done="true">`, `Missing:</span> SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set, or SLACK_BOT_TOKEN<span class="dim"> — copy the Client ID</span>`,
		`<li>Paste the manifest.</li>`,
		`<button type="button" class="copy" data-copy="manifest-slack" hidden>Copy</button>`,
		`<pre class="file" id="manifest-slack">display_information:
  name: &lt;switchboard&gt;
</pre>`,
		"<code>switchboard slack manifest --public-url https://x.example</code>",
		`<details class="app-setup" id="app-linear">`, `<p class="dim" id="manifest-problem-linear">the application needs the gateway&#39;s public URL</p>`,
	}, []string{`id="app-github"`, `id="manifest-linear"`, "<script>"})
}
