package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/switchboardhq/switchboard/fixtures/browser"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// startDev runs `switchboard dev` with args on free ports, with no model
// unless env names one, and returns it with its page's URL and its
// temporary directory. The platforms' variables of a real deployment,
// left in its environment, must not reach it.
func startDev(t *testing.T, env map[string]string, args ...string) (dev *server, page, dir string) {
	t.Helper()
	environ := withEnv(append(childEnviron(), "SLACK_BOT_TOKEN=xoxb-a-real-workspace", "SWITCHBOARD_STORE=postgres://nowhere.invalid/db", "SWITCHBOARD_MODEL="), env)
	dev = spawn(t, environ, append([]string{"dev", "--addr", anyPort, "--gateway-addr", anyPort}, args...)...)
	t.Cleanup(func() {
		// Stopped as a person stops it, so that it removes its directory;
		// killed if it does not stop, and the directory removed here.
		_ = dev.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-dev.exited:
		case <-time.After(patience):
			dev.kill()
		}
		if dir != "" {
			os.RemoveAll(dir)
		}
		if t.Failed() {
			t.Logf("dev output:\n%s", dev.out.String())
		}
	})
	dev.waitLog("Press Ctrl-C to stop.")
	out := dev.out.String()
	page = regexp.MustCompile(`the playground is at (http://\S+/)`).FindStringSubmatch(out)[1]
	dir = regexp.MustCompile(`data +(\S+) \(removed`).FindStringSubmatch(out)[1]
	return dev, page, dir
}

// pageShows waits until the playground shows sel, and fails at once with
// the page's error line when the gateway refused the action instead.
func pageShows(b *consoleBrowser, what, sel string) {
	b.t.Helper()
	quoted, _ := json.Marshal(sel)
	got := read(b, what, chromedp.Poll[string](`(() => {
		const e = document.getElementById("error");
		if (e && !e.hidden) return "the error " + JSON.stringify(e.textContent);
		const n = document.querySelector(`+string(quoted)+`);
		return n && n.offsetParent !== null ? "shown" : null;
	})()`, chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(20*time.Millisecond)))
	if got != "shown" {
		b.t.Fatalf("waiting for %s, the page shows %s", what, got)
	}
}

// TestPlaygroundInBrowser drives switchboard dev's page in headless
// chromium with the scripted model: a message mentioning the agent in the
// simulated Slack channel is answered in its thread (with the 👀 of the
// model's tool call); a comment on the simulated pull request gets a check
// run and a reply; a thread on the simulated merge request gets its answer
// in the thread and a commit status, and a reply there steers the same
// session; a delegated Linear issue shows the agent's activities.
// Every answer says it is scripted. Stopped with SIGTERM, dev exits 0 and
// removes its directory. Pictures for docs/images with
// SWITCHBOARD_SCREENSHOTS (scripts/screenshots).
func TestPlaygroundInBrowser(t *testing.T) {
	dev, page, dir := startDev(t, nil, "--scripted")
	if out := dev.out.String(); strings.Contains(out, "xoxb-a-real-workspace") || strings.Contains(out, "nowhere.invalid") {
		t.Fatalf("the playground's gateway saw the real deployment's variables:\n%s", out)
	}
	b := &consoleBrowser{t: t, tab: browser.New(t), base: page}
	ctx, cancel := context.WithTimeout(b.tab, browser.HangBound)
	defer cancel()
	b.ctx = ctx
	b.run("open the playground",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#model.scripted`)),
		chromedp.WaitVisible(chromedp.CSS(`#model-note`)),
		chromedp.WaitVisible(chromedp.CSS(`#linear-issues li[data-identifier="ENG-1"] button.delegate`)),
	)
	if got := b.text("#model"); got != "model: scripted demo" {
		t.Errorf("the model badge says %q", got)
	}
	// Before a delegation Linear's composer has no one to write to: the
	// page says how to start instead.
	if h := b.text("#linear-hint"); !strings.Contains(h, "Delegate an issue") {
		t.Errorf("Linear's hint says %q", h)
	}
	if shown := read(b, "Linear's composer", chromedp.Evaluate[bool](`getComputedStyle(document.getElementById("linear-form")).display !== "none"`)); shown {
		t.Error("Linear's composer shows before an issue is delegated")
	}

	// Slack: a mention in #general is answered in its thread.
	b.run("write in Slack",
		chromedp.SendKeys(chromedp.CSS(`#slack-text`), "@switchboard what breaks on Mondays?"),
		chromedp.Click(chromedp.CSS(`#slack-send`)),
	)
	pageShows(b, "the reply in the thread", `#slack-messages .slack-message .thread .slack-message.bot .badge.scripted`)
	reply := b.text(`#slack-messages .thread .slack-message.bot .text`)
	for _, want := range []string{"Scripted demo model", "“what breaks on Mondays?”", "mcp_slack_add_reaction"} {
		if !strings.Contains(reply, want) {
			t.Errorf("the Slack reply lacks %q:\n%s", want, reply)
		}
	}
	if strings.Contains(reply, "@you") {
		t.Errorf("the Slack reply quotes the author's mention:\n%s", reply)
	}
	if r := b.text(`#slack-messages > .slack-message .reactions`); !strings.Contains(r, "👀") {
		t.Errorf("the person's message shows reactions %q, want 👀", r)
	}
	if v := read(b, "the composer", chromedp.Value(chromedp.CSS(`#slack-text`))); v != "" {
		t.Errorf("the composer kept %q after sending", v)
	}

	// A reply in the thread, without a mention, reaches the same session.
	b.run("reply in the thread",
		chromedp.Click(chromedp.CSS(`#slack-messages .slack-message .reply`)),
		chromedp.WaitVisible(chromedp.CSS(`#slack-thread`)),
		chromedp.SendKeys(chromedp.CSS(`#slack-text`), "and on Tuesdays?"),
		chromedp.Click(chromedp.CSS(`#slack-send`)),
	)
	pageShows(b, "the second reply", `#slack-messages .thread .slack-message.bot:nth-child(3)`)
	if n := read(b, "the channel", chromedp.Evaluate[int](`document.querySelectorAll("#slack-messages > .slack-message").length`)); n != 1 {
		t.Errorf("the channel shows %d top-level messages, want the one thread", n)
	}
	if r := b.text(`#slack-messages .thread .slack-message.bot:nth-child(3) .text`); !strings.Contains(r, "and on Tuesdays?") {
		t.Errorf("the second reply:\n%s", r)
	}

	// A channel message that mentions no one gets no answer, and the page
	// says why.
	b.run("write in the channel without a mention",
		chromedp.Click(chromedp.CSS(`#slack-unthread`)),
		chromedp.SendKeys(chromedp.CSS(`#slack-text`), "lunch anyone?"),
		chromedp.Click(chromedp.CSS(`#slack-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#slack-hint`)),
	)
	if h := b.text(`#slack-hint`); !strings.Contains(h, "mentions @switchboard") {
		t.Errorf("the Slack hint says %q", h)
	}
	// Slack sends each mention twice (message and app_mention): the
	// second is expected, not a repeated delivery worth an info line.
	if out := dev.out.String(); strings.Contains(out, "repeated delivery") {
		t.Errorf("a mention was logged as a repeated delivery:\n%s", out)
	}

	// GitHub: a comment on the pull request gets a check run and a reply.
	b.run("comment on the pull request",
		chromedp.SendKeys(chromedp.CSS(`#github-text`), "@sb-agent please review this"),
		chromedp.Click(chromedp.CSS(`#github-send`)),
	)
	pageShows(b, "the reply on the pull request", `#github-comments .github-comment.bot`)
	pageShows(b, "the check run", `#github-checks .check.success`)
	if c := b.text(`#github-comments .github-comment.bot .text`); !strings.Contains(c, "Scripted demo model") || !strings.Contains(c, "please review this") || strings.Contains(c, "<!--") {
		t.Errorf("the pull request's reply:\n%s", c)
	}
	if c := b.text(`#github-checks .check`); !strings.Contains(c, "sb-agent") {
		t.Errorf("the check run shows %q", c)
	}

	// GitLab: a thread on the merge request is answered in the thread,
	// with 👀 on the note and the commit status on the head commit; a
	// reply in the thread, without a mention, steers the same session.
	b.run("start a thread on the merge request",
		chromedp.SendKeys(chromedp.CSS(`#gitlab-text`), "@switchboard what does this change?"),
		chromedp.Click(chromedp.CSS(`#gitlab-send`)),
	)
	pageShows(b, "the answer in the merge request's thread", `#gitlab-discussions .discussion .thread .gitlab-note.bot`)
	pageShows(b, "the commit status", `#gitlab-statuses .check.success`)
	if c := b.text(`#gitlab-discussions .discussion .thread .gitlab-note.bot .text`); !strings.Contains(c, "Scripted demo model") ||
		!strings.Contains(c, "what does this change?") || !strings.Contains(c, "mcp_gitlab_get_merge_request") || strings.Contains(c, "<!--") {
		t.Errorf("the merge request's answer:\n%s", c)
	}
	if r := b.text(`#gitlab-discussions .discussion > .gitlab-note .reactions`); !strings.Contains(r, "👀") {
		t.Errorf("the person's note shows awards %q, want 👀", r)
	}
	if c := b.text(`#gitlab-statuses .check`); !strings.Contains(c, "switchboard") {
		t.Errorf("the commit status shows %q", c)
	}
	b.run("reply in the merge request's thread",
		chromedp.Click(chromedp.CSS(`#gitlab-discussions .discussion .link`)),
		chromedp.WaitVisible(chromedp.CSS(`#gitlab-thread`)),
		chromedp.SendKeys(chromedp.CSS(`#gitlab-text`), "and the tests?"),
		chromedp.Click(chromedp.CSS(`#gitlab-send`)),
	)
	pageShows(b, "the second answer in the thread", `#gitlab-discussions .discussion .thread .gitlab-note.bot:nth-child(3)`)
	if n := read(b, "the merge request", chromedp.Evaluate[int](`document.querySelectorAll("#gitlab-discussions .discussion").length`)); n != 1 {
		t.Errorf("the merge request shows %d threads, want the one", n)
	}
	if r := b.text(`#gitlab-discussions .thread .gitlab-note.bot:nth-child(3) .text`); !strings.Contains(r, "and the tests?") {
		t.Errorf("the second answer:\n%s", r)
	}

	// Linear: a delegated issue shows the agent's activities.
	b.run("delegate a Linear issue",
		chromedp.Click(chromedp.CSS(`#linear-issues li[data-identifier="ENG-1"] button.delegate`)),
	)
	pageShows(b, "the response activity", `#linear-sessions .session .entry.response`)
	if a := b.text(`#linear-sessions .session .entry.action`); !strings.Contains(a, "mcp_linear_list_teams") {
		t.Errorf("the action activity shows %q", a)
	}
	if r := b.text(`#linear-sessions .session .entry.response`); !strings.Contains(r, "Scripted demo model") {
		t.Errorf("the response activity shows %q", r)
	}
	b.run("reply to the agent in Linear",
		chromedp.SendKeys(chromedp.CSS(`#linear-text`), "also check Sundays"),
		chromedp.Click(chromedp.CSS(`#linear-send`)),
	)
	pageShows(b, "the prompt", `#linear-sessions .entry.prompt`)
	pageShows(b, "the answer to the prompt", `#linear-sessions .entry.response:nth-last-child(1)`)
	if r := b.text(`#linear-sessions .entry.response:nth-last-child(1)`); !strings.Contains(r, "also check Sundays") {
		t.Errorf("the answer to the prompt:\n%s", r)
	}
	b.shot("playground")

	// Bad input is refused with a message and loses nothing.
	b.run("send an empty message",
		chromedp.Click(chromedp.CSS(`#slack-send`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)),
	)
	if e := b.text(`#error`); !strings.Contains(e, "text is empty") {
		t.Errorf("an empty message shows %q", e)
	}

	if err := dev.term(); err != nil {
		t.Fatalf("dev did not stop cleanly: %v\n%s", err, dev.out.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dev left %s behind (%v)", dir, err)
	}
	if d := filepath.Dir(dir); d != os.TempDir() {
		t.Errorf("dev's directory %s is not in the temporary directory %s", dir, os.TempDir())
	}
}

// TestPlaygroundWithoutModel: with no model configured, dev says it needs
// one and runs the scripted model.
func TestPlaygroundWithoutModel(t *testing.T) {
	dev, page, _ := startDev(t, nil)
	out := dev.out.String()
	for _, want := range []string{"no model is configured", "SWITCHBOARD_MODEL=anthropic/<model> with ANTHROPIC_API_KEY", "OPENAI_BASE_URL (Ollama, vLLM)", "model    scripted demo"} {
		if !strings.Contains(out, want) {
			t.Errorf("dev's output lacks %q:\n%s", want, out)
		}
	}
	resp, err := http.Get(page + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Model struct{ Scripted bool } }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !st.Model.Scripted {
		t.Errorf("the page's state: %+v %v", st, err)
	}
	if err := dev.term(); err != nil {
		t.Fatalf("dev did not stop cleanly: %v", err)
	}
}

// playgroundState is what the tests read of the page's /api/state.
type playgroundState struct {
	Model struct {
		Name     string
		Scripted bool
	}
	Slack struct {
		Messages []playgroundMessage
	}
}

type playgroundMessage struct {
	TS        string
	Bot       bool
	Text      string
	Status    string
	Reactions []string
	Replies   []playgroundMessage
}

// devPost posts an action to the page and wants it delivered.
func devPost(t *testing.T, page, path string, body any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(page+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("post %s: %s %s", path, resp.Status, msg)
	}
}

// devWait reads the page's state until cond holds, failing after
// patience. The page has no stream to wait on: it is read as often as the
// page itself reads it.
func devWait(t *testing.T, page, what string, cond func(playgroundState) bool) playgroundState {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		var st playgroundState
		resp, err := http.Get(page + "api/state")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the playground never showed %s: %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// botReplies are the agent's replies in the channel's first thread.
func (st playgroundState) botReplies() []playgroundMessage {
	var out []playgroundMessage
	if len(st.Slack.Messages) > 0 {
		for _, r := range st.Slack.Messages[0].Replies {
			if r.Bot {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestPlaygroundUsesTheConfiguredModel: with SWITCHBOARD_MODEL and an
// OpenAI-compatible URL (as Ollama's), the agent answers with that model,
// and nothing says scripted.
func TestPlaygroundUsesTheConfiguredModel(t *testing.T) {
	ms, hs := modelserver.Start(t, func(s *modelserver.Server) {
		s.Default = func(modelserver.Request) modelserver.Step {
			return modelserver.Step{Text: "Mondays break because of the early return."}
		}
	})
	dev, page, _ := startDev(t, map[string]string{"SWITCHBOARD_MODEL": "openai/llama3.1", "OPENAI_BASE_URL": modelserver.OpenAIBaseURL(hs.URL)})
	if out := dev.out.String(); strings.Contains(out, "scripted") || !strings.Contains(out, "model    openai/llama3.1") {
		t.Errorf("dev's output:\n%s", out)
	}
	devPost(t, page, "api/slack/messages", map[string]string{"text": "@switchboard why Mondays?"})
	st := devWait(t, page, "a reply", func(st playgroundState) bool { return len(st.botReplies()) > 0 })
	if st.Model.Name != "openai/llama3.1" || st.Model.Scripted {
		t.Errorf("the page's model: %+v", st.Model)
	}
	if got := st.botReplies()[0].Text; got != "Mondays break because of the early return." {
		t.Errorf("the reply is %q", got)
	}
	if len(ms.Requests()) != 1 {
		t.Errorf("the configured model got %d requests, want 1", len(ms.Requests()))
	}
}

// TestPlaygroundStop: while the agent works, the thread shows its status
// with a Stop button; pressed, it is Slack's :octagonal_sign: reaction on
// the thread's first message, which stops the turn.
func TestPlaygroundStop(t *testing.T) {
	ms, hs := modelserver.Start(t, func(s *modelserver.Server) {
		s.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Hang: true} }
	})
	_, page, _ := startDev(t, map[string]string{"SWITCHBOARD_MODEL": "openai/llama3.1", "OPENAI_BASE_URL": modelserver.OpenAIBaseURL(hs.URL)})
	devPost(t, page, "api/slack/messages", map[string]string{"text": "@switchboard take your time"})
	st := devWait(t, page, "the agent's status", func(st playgroundState) bool {
		return len(st.Slack.Messages) == 1 && st.Slack.Messages[0].Status != ""
	})
	root := st.Slack.Messages[0]
	// The status shows before the model call goes out; a stop before it
	// would stop a turn that never asked.
	waitRequests(t, ms, 1)
	devPost(t, page, "api/slack/reactions", map[string]string{"ts": root.TS, "name": "octagonal_sign"})
	st = devWait(t, page, "the turn stopped", func(st playgroundState) bool {
		replies := st.botReplies()
		return st.Slack.Messages[0].Status == "" && len(replies) > 0 && strings.Contains(replies[len(replies)-1].Text, "Stopped")
	})
	if !slices.Contains(st.Slack.Messages[0].Reactions, "octagonal_sign") {
		t.Errorf("the first message's reactions: %v", st.Slack.Messages[0].Reactions)
	}
	if n := len(ms.Requests()); n != 1 {
		t.Errorf("%d model requests, want the one stopped", n)
	}
}

// TestPlaygroundRefusesOtherAddresses: dev listens on loopback only.
func TestPlaygroundRefusesOtherAddresses(t *testing.T) {
	for _, args := range [][]string{{"--addr", "0.0.0.0:0"}, {"--gateway-addr", "192.0.2.1:8080"}, {"--addr", "8081"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := exec.Command(serveBinary(t), append([]string{"dev"}, args...)...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2:\n%s", err, out)
			}
			if !strings.Contains(string(out), args[0]) {
				t.Errorf("the error does not name %s:\n%s", args[0], out)
			}
		})
	}
}
