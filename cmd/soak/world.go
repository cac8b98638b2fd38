package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const (
	adminToken    = "soak-admin-token"
	slackSecret   = "soak-slack-signing-secret"
	githubSecret  = "soak-github-webhook-secret"
	slackChannel  = "C0SOAK"
	githubRepo    = "acme/widgets"
	githubInstall = 777
	// idleSeconds is the idle timeout of sandboxes and MCP connections,
	// waited once after the run before containers and goroutines are
	// counted.
	idleSeconds = 5
)

// world is the gateway and everything it talks to, all on 127.0.0.1.
type world struct {
	cfg    config
	tb     *fixtureTB
	gw     *cluster
	model  *modelserver.Server
	modelH *httptest.Server
	slack  *fakeslack.Server
	team   fakeslack.Team
	github *fakegithub.Server
	linear *fakelinear.Server
	issue  fakelinear.Issue
	rc     *receiver

	answers atomic.Int64 // model answers given
}

// hookSecret signs the deliveries to the receiver.
func hookSecret() string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte("soak-destination-secret-32-bytes"))
}

func newWorld(cfg config, tb *fixtureTB, dir string) (*world, error) {
	w := &world{cfg: cfg, tb: tb}
	w.model = modelserver.New()
	w.model.Default = w.answer
	w.modelH = httptest.NewServer(w.model)
	tb.Cleanup(func() { w.model.Close(); w.modelH.Close() })

	w.slack = fakeslack.Start(tb)
	bot := w.slack.AddTeam(fakeslack.Team{ID: "T0SOAK", Name: "Soak"})
	w.team, _ = w.slack.Team("T0SOAK")
	w.github = fakegithub.Start(tb)
	w.github.SetPermission("alice", "write")
	w.linear = fakelinear.New(tb)
	w.issue = w.linear.SeedIssue(fakelinear.Issue{Title: "Widgets break on Mondays", Desc: "Steps: run it on a Monday."})

	rc, err := newReceiver(hookSecret(), cfg.hookFailure, cfg.seed)
	if err != nil {
		return nil, err
	}
	w.rc = rc
	tb.Cleanup(rc.srv.Close)

	bin := cfg.bin
	if bin == "" {
		if bin, err = build(cfg.ctx, dir); err != nil {
			return nil, err
		}
	}
	sandbox := "none"
	if cfg.docker {
		sandbox = "docker"
	}
	env := map[string]string{
		"SWITCHBOARD_ADDR":                        "127.0.0.1:0",
		"SWITCHBOARD_DATA_DIR":                    filepath.Join(dir, "data"),
		"SWITCHBOARD_ADMIN_TOKEN":                 adminToken,
		"SWITCHBOARD_LOG_LEVEL":                   "info",
		"SWITCHBOARD_SANDBOX":                     sandbox,
		"SWITCHBOARD_SANDBOX_IDLE_SECONDS":        strconv.Itoa(idleSeconds),
		"SWITCHBOARD_MCP_IDLE_SECONDS":            strconv.Itoa(idleSeconds),
		"SWITCHBOARD_MODEL":                       "anthropic/claude-soak",
		"ANTHROPIC_API_KEY":                       "soak-key",
		"ANTHROPIC_BASE_URL":                      modelserver.AnthropicBaseURL(w.modelH.URL),
		"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE":       "true",
		"SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS":     "20",
		"SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS": "1",
		"SLACK_SIGNING_SECRET":                    slackSecret,
		"SLACK_BOT_TOKEN":                         bot,
		"SLACK_API_URL":                           w.slack.APIURL(),
		"SLACK_PROGRESS_MS":                       "200",
		"GITHUB_APP_ID":                           strconv.FormatInt(w.github.AppID, 10),
		"GITHUB_APP_PRIVATE_KEY":                  string(w.github.KeyPEM),
		"GITHUB_WEBHOOK_SECRET":                   githubSecret,
		"GITHUB_APP_SLUG":                         w.github.Slug,
		"GITHUB_API_URL":                          w.github.APIURL(),
		"LINEAR_CLIENT_ID":                        w.linear.ClientID,
		"LINEAR_CLIENT_SECRET":                    w.linear.ClientSecret,
		"LINEAR_WEBHOOK_SECRET":                   w.linear.WebhookSecret,
		"LINEAR_API_URL":                          w.linear.URL(),
	}
	if cfg.replicas > 1 {
		// The replicas share the store, its master key and the admin
		// token; each has its data directory and its name.
		env["SWITCHBOARD_STORE"] = cfg.postgres
		env["SWITCHBOARD_MASTER_KEY"] = "soak-master-key-0123456789abcdef0123"
	}
	var gws []*gateway
	for i := range cfg.replicas {
		g := &gateway{bin: bin, dataDir: env["SWITCHBOARD_DATA_DIR"], logPath: filepath.Join(dir, "serve.log")}
		if cfg.replicas > 1 {
			g.dataDir = filepath.Join(dir, fmt.Sprintf("data-%d", i+1))
			g.logPath = filepath.Join(dir, fmt.Sprintf("serve-%d.log", i+1))
		}
		if err := os.MkdirAll(g.dataDir, 0o700); err != nil {
			return nil, err
		}
		for k, v := range env {
			if k == "SWITCHBOARD_DATA_DIR" {
				v = g.dataDir
			}
			g.env = append(g.env, k+"="+v)
		}
		if cfg.replicas > 1 {
			g.env = append(g.env, fmt.Sprintf("SWITCHBOARD_REPLICA_ID=soak-%d", i+1))
		}
		gws = append(gws, g)
	}
	w.gw = newCluster(gws, cfg.seed)
	tb.Cleanup(w.gw.killAll)
	for _, g := range gws {
		if err := g.start(); err != nil {
			return nil, err
		}
	}
	if err := w.installLinear(); err != nil {
		return nil, fmt.Errorf("install linear: %w", err)
	}
	code, raw, err := w.call("POST", "/v1/destinations", map[string]any{"url": rc.srv.URL + "/hooks", "secret": hookSecret()})
	if err != nil || code != http.StatusCreated {
		return nil, fmt.Errorf("create the destination: %d %s %v", code, raw, err)
	}
	return w, nil
}

// answer is the scripted model: a unique answer per call, after a short
// delay so that steering and interrupts land inside turns. With a sandbox,
// some turns run a command first.
func (w *world) answer(req modelserver.Request) modelserver.Step {
	n := w.answers.Add(1)
	delay := time.Duration(n*37%250) * time.Millisecond
	if w.cfg.docker && n%4 == 0 && !lastIsToolResult(req) {
		return modelserver.Step{Delay: delay, ToolCalls: []modelserver.ToolCall{{Name: "bash", Input: map[string]any{"command": "echo soak"}}}}
	}
	return modelserver.Step{Delay: delay, Text: answerText(n)}
}

func lastIsToolResult(req modelserver.Request) bool {
	if len(req.Messages) == 0 {
		return false
	}
	for _, b := range req.Messages[len(req.Messages)-1].Content {
		if b.Type == core.BlockToolResult {
			return true
		}
	}
	return false
}

// answerText is the model's n-th answer; "#n." is found in no other.
func answerText(n int64) string { return fmt.Sprintf("Soak answer #%d.", n) }

// installLinear runs the OAuth install as a browser would.
func (w *world) installLinear() error {
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := w.gw.URL() + "/oauth/linear/install"
	for hop := 0; hop < 2; hop++ {
		resp, err := noFollow.Get(next)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			return fmt.Errorf("GET %s: %d", next, resp.StatusCode)
		}
		next = resp.Header.Get("Location")
	}
	resp, err := http.Get(next)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback: %d %s", resp.StatusCode, body)
	}
	return nil
}

// call sends an API request to a running replica with the admin token.
func (w *world) call(method, path string, body any, hdr ...string) (int, []byte, error) {
	url := w.gw.URL()
	if url == "" {
		return 0, nil, errors.New("the gateway is down, between a kill and its restart")
	}
	return w.callAt(url, method, path, body, hdr...)
}

// callAt sends an API request to the replica at url.
func (w *world) callAt(url, method, path string, body any, hdr ...string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(w.cfg.ctx, method, url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return send(req)
}

// send does req and reads the answer.
func send(req *http.Request) (int, []byte, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// closeConns drops every idle connection on both sides of the gateway, so
// that a goroutine count does not count them.
func (w *world) closeConns() {
	http.DefaultClient.CloseIdleConnections()
	w.modelH.CloseClientConnections()
	w.slack.CloseClientConnections()
	w.github.CloseClientConnections()
	w.linear.CloseClientConnections()
	w.rc.srv.CloseClientConnections()
}

// metricAt reads one unlabelled sample from the /metrics of the replica
// at url.
func (w *world) metricAt(url, name string) (float64, error) {
	_, raw, err := w.callAt(url, "GET", "/metrics", nil)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}
