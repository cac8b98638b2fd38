package main_test

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestMisconfigurationNamesTheVariable: each bad setting stops serve at
// once with one line that names the variable.
func TestMisconfigurationNamesTheVariable(t *testing.T) {
	tests := []struct{ name, value string }{
		{"SWITCHBOARD_WORKERS", "many"},
		{"SWITCHBOARD_WORKERS", "0"},
		{"SWITCHBOARD_MODEL", "claude"},
		{"SWITCHBOARD_MODEL", "google/gemini"},
		{"SWITCHBOARD_ADDR", "nowhere"},
		{"SWITCHBOARD_COMPACT_FRACTION", "2"},
		{"SWITCHBOARD_TURN_SECONDS", "-5"},
		{"SWITCHBOARD_LOG_LEVEL", "chatty"},
		{"SWITCHBOARD_LOG_FORMAT", "xml"},
		{"SWITCHBOARD_MAX_BODY_BYTES", "12"},
		{"SWITCHBOARD_MASTER_KEY", "short"},
		{"SWITCHBOARD_PUBLIC_URL", "gateway.example.com"},
		{"SWITCHBOARD_PUBLIC_URL", "ftp://gateway.example.com"},
		{"SWITCHBOARD_ADMIN_TOKEN", "abc"},
		{"SWITCHBOARD_ADMIN_TOKEN", "fifteen-chars15"},
		{"SWITCHBOARD_ADDR", ":99999"},
		{"SWITCHBOARD_ADDR", "127.0.0.1:http-ish"},
		// A model whose provider has no key: named at start, with the
		// variable to set, not at the first turn in a thread.
		{"SWITCHBOARD_MODEL", "openai/gpt-test"},
		{"SWITCHBOARD_ATTACHMENT_MAX_BYTES", "0"},
		{"SWITCHBOARD_MODEL_IMAGES", "mistral/*"},
		{"SWITCHBOARD_EMBEDDING_MODEL", "nomic-embed-text"},
		{"SWITCHBOARD_EMBEDDING_BASE_URL", "localhost:11434"},
	}
	// These are checked before anything is written.
	early := map[string]bool{"SWITCHBOARD_ADDR": true, "SWITCHBOARD_PUBLIC_URL": true, "SWITCHBOARD_ADMIN_TOKEN": true, "SWITCHBOARD_MODEL": true}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			out := serveFails(t, dir, map[string]string{tt.name: tt.value, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""})
			wantOneLine(t, out, tt.name)
			if tt.value == "openai/gpt-test" && !strings.Contains(out, "OPENAI_API_KEY") {
				t.Errorf("the line does not say which variable to set: %s", out)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) && early[tt.name] {
				t.Errorf("the data directory was made before %s was refused", tt.name)
			}
		})
	}
}

// TestUnknownVariablesWarned: each variable that looks like a setting and
// is none is warned of once, with the closest setting; CI runners' own
// GITHUB_* are not, nor the CLI's variables.
func TestUnknownVariablesWarned(t *testing.T) {
	out := serveFails(t, t.TempDir(), map[string]string{
		"SWITCHBOARD_MODLE": "anthropic/claude-test", "SLACK_SIGNING_SECRT": "x", "GITHUB_APP_IDD": "1", "GITHUB_WEBHOOK_SECRT": "x",
		"LINEAR_CLIENTID": "x", "GITHUB_SHA": "abc", "GITHUB_TOKEN": "t", "SWITCHBOARD_URL": "http://x", "SWITCHBOARD_TOKEN": "t",
		"SWITCHBOARD_ADMIN_TOKEN": "twenty-characters-20",
		"SWITCHBOARD_WORKERS":     "0", // stops serve once the settings are read
	})
	if !strings.Contains(out, "SWITCHBOARD_ADMIN_TOKEN has 20 characters: 32 or more random ones are safer") {
		t.Errorf("no warning of a short admin token:\n%s", out)
	}
	for typo, want := range map[string]string{
		"SWITCHBOARD_MODLE": "SWITCHBOARD_MODEL", "SLACK_SIGNING_SECRT": "SLACK_SIGNING_SECRET", "GITHUB_APP_IDD": "GITHUB_APP_ID",
		"GITHUB_WEBHOOK_SECRT": "GITHUB_WEBHOOK_SECRET", "LINEAR_CLIENTID": "LINEAR_CLIENT_ID",
	} {
		line := "unknown variable " + typo + " is ignored; did you mean " + want + "?"
		if n := strings.Count(out, line); n != 1 {
			t.Errorf("%q appears %d times in:\n%s", line, n, out)
		}
	}
	for _, quiet := range []string{"GITHUB_SHA", "GITHUB_TOKEN", "SWITCHBOARD_URL", "SWITCHBOARD_TOKEN"} {
		if strings.Contains(out, quiet) {
			t.Errorf("%s is warned of:\n%s", quiet, out)
		}
	}
}

// TestSlackAPIURLWithoutSlash: a Slack API base given without its
// trailing slash works as with it (it used to make every call miss).
func TestSlackAPIURLWithoutSlash(t *testing.T) {
	ms, hs := modelserver.Start(t)
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(fakeslack.Team{ID: "T0SLASH", Name: "Slash"})
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	slackSingleEnv(env, fake, bot)
	env["SLACK_API_URL"] = strings.TrimSuffix(fake.APIURL(), "/")
	w := &slackWorld{t: t, ms: ms, fake: fake, env: env, srv: startServer(t, t.TempDir(), env)}
	w.team = w.teamByID("T0SLASH")
	ms.Push(modelserver.Step{Text: "Here."})
	m := fake.Human("T0SLASH", "C0S", "U0A", "<@"+w.team.BotUserID+"> there?", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, "C0S", m.TS, "Here.")
}

// TestAgentModelWithoutClient: an agent whose model's provider has no key
// is refused at create and update, naming the variable to set.
func TestAgentModelWithoutClient(t *testing.T) {
	_, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	code, raw := srv.do("POST", "/v1/agents", map[string]any{"name": "gpt", "model": "openai/gpt-test", "system": "s"})
	if code != 400 || !strings.Contains(string(raw), `field \"model\": model \"openai/gpt-test\": set OPENAI_API_KEY`) {
		t.Fatalf("create: %d %s", code, raw)
	}
	if code, raw = srv.do("POST", "/v1/agents", map[string]any{"name": "claude", "model": "anthropic/claude-test", "system": "s"}); code != 201 {
		t.Fatalf("create with a served model: %d %s", code, raw)
	}
	if code, raw = srv.do("POST", "/v1/agents/claude", map[string]any{"model": "openai/gpt-test"}); code != 400 || !strings.Contains(string(raw), "OPENAI_API_KEY") {
		t.Fatalf("update: %d %s", code, raw)
	}
}

// TestRootRedirectsToConsole: the gateway's address alone leads a browser
// to the console, relative to where it is served.
func TestRootRedirectsToConsole(t *testing.T) {
	_, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	resp, err := noFollow.Get(srv.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "console/" {
		t.Fatalf("GET /: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, err = noFollow.Get(srv.url + "/nothing-here"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another path: %v %v", resp, err)
	}
	resp.Body.Close()
}
