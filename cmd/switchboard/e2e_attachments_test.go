package main_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// attachmentEnv lets the gateway download from the fakes (on loopback),
// up to 1 MiB a file, and gives the scripted model images.
func attachmentEnv(env map[string]string) {
	env["SWITCHBOARD_ATTACHMENT_ALLOW_PRIVATE"] = "true"
	env["SWITCHBOARD_ATTACHMENT_MAX_BYTES"] = "1048576"
	env["SWITCHBOARD_MODEL_IMAGES"] = "anthropic/*"
}

// requestText is the text of a model request's first user message.
func requestText(r modelserver.Request) string {
	var b strings.Builder
	for _, bl := range r.Messages[0].Content {
		b.WriteString(bl.Text + "\n")
	}
	return b.String()
}

// TestSlackAttachments is acceptance 2 of attachments: a mention with an
// image, a file and a file over the limit. The model's request holds the
// image as image content, the file is in the sandbox at the path the
// request names, the oversized one is a note saying why; the bot token
// downloaded them and is nowhere in the sandbox.
func TestSlackAttachments(t *testing.T) {
	ms, hs := modelserver.Start(t)
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(fakeslack.Team{ID: "T0FILES", Name: "Files"})
	env := sandboxEnv(t, hs.URL)
	slackSingleEnv(env, fake, bot)
	attachmentEnv(env)
	dataDir := t.TempDir()
	w := &slackWorld{t: t, ms: ms, fake: fake, env: env, srv: startServer(t, dataDir, env)}
	w.team = w.teamByID("T0FILES")
	cli, dep := deploymentOf(t, dataDir)

	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0xa5}, 300)...)
	zip := []byte("PK\x03\x04 the spreadsheet export")
	files := []fakeslack.File{
		fake.Upload("T0FILES", "screenshot.png", "image/png", png, 0),
		fake.Upload("T0FILES", "export.zip", "application/zip", zip, 0),
		fake.Upload("T0FILES", "dump.tar", "application/x-tar", []byte("small really"), 5<<20),
	}
	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_ls", "ls /workspace/attachments && cat /workspace/attachments/*-export.zip")}},
		modelserver.Step{Text: "The screenshot shows the error."},
	)
	m := fake.Human("T0FILES", "C0FILES", "U0ALICE", "<@"+w.team.BotUserID+"> what is wrong here?", "", files...)
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, "C0FILES", m.TS, "The screenshot shows the error.")
	id := w.session("T0FILES", "C0FILES", m.TS)
	_, evs := w.srv.waitIdle(id)

	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var images []core.Block
	for _, b := range reqs[0].Messages[0].Content {
		if b.Type == core.BlockImage {
			images = append(images, b)
		}
	}
	if len(images) != 1 || images[0].MediaType != "image/png" || !bytes.Equal(images[0].Data, png) {
		t.Fatalf("the request's images: %+v", images)
	}
	text := requestText(reqs[0])
	for _, want := range []string{
		"what is wrong here?",
		"[Attached image screenshot.png (",
		fmt.Sprintf("[Attached file export.zip (%d B): is in the sandbox at /workspace/attachments/", len(zip)),
		"[Attached file dump.tar (5.0 MiB): not read, 5.0 MiB, over the 1.0 MiB limit]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the request lacks %q:\n%s", want, text)
		}
	}
	if out := results(t, evs)["toolu_ls"]; out.IsError || !strings.Contains(out.Output, "-export.zip") || !strings.Contains(out.Output, "the spreadsheet export") {
		t.Fatalf("the sandbox's attachments: %+v", out)
	}
	for _, tok := range fake.FileDownloads() {
		if tok != bot {
			t.Errorf("a file was downloaded with %q, not the bot token", tok)
		}
	}
	if n := len(fake.FileDownloads()); n != 2 {
		t.Errorf("%d downloads, want 2 (the file over the limit is not fetched)", n)
	}

	// The bot token is nowhere in the sandbox (a canary shows the search
	// finds what is there), nor in the log.
	box, ok := sandboxes(t, cli, dep)[id]
	if !ok {
		t.Fatal("no sandbox for the session")
	}
	canary := "canary-" + randomToken(t)
	execIn(t, cli, box.ID, []byte(canary), "sh", "-c", "cat > /workspace/.canary")
	found := execIn(t, cli, box.ID, []byte(canary+"\n"+bot+"\n"), "grep", "-rlsF", "-f", "-", "/", "--exclude-dir=proc", "--exclude-dir=sys", "--exclude-dir=dev")
	if strings.TrimSpace(found) != "/workspace/.canary" {
		t.Errorf("files in the sandbox holding the bot token (only the canary expected): %q", found)
	}
	for _, e := range evs {
		if strings.Contains(string(e.Body), bot) {
			t.Errorf("the log's %s holds the bot token", e.Type)
		}
	}
}

// TestSlackAttachmentsWithoutScope: a workspace that installed the app
// without files:read gets its files as a note that says so, and nothing
// is downloaded.
func TestSlackAttachmentsWithoutScope(t *testing.T) {
	w := startSlackOAuth(t, map[string]string{"SWITCHBOARD_ATTACHMENT_ALLOW_PRIVATE": "true"})
	w.install(fakeslack.Grant{Team: fakeslack.Team{ID: "T0NOFILE", Name: "No files"}, Installer: "U0ADMIN",
		Scope: "app_mentions:read,channels:history,chat:write,reactions:write"})
	w.team = w.teamByID("T0NOFILE")
	w.ms.Push(modelserver.Step{Text: "I cannot see the file."})
	f := w.fake.Upload("T0NOFILE", "notes.txt", "text/plain", []byte("secret notes"), 0)
	m := w.fake.Human("T0NOFILE", "C0X", "U0BOB", "<@"+w.team.BotUserID+"> read this", "", f)
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, "C0X", m.TS, "I cannot see the file.")
	text := requestText(w.ms.Requests()[0])
	if !strings.Contains(text, "[Attached file notes.txt (12 B): not read, the Slack app may not read files in this workspace: it lacks the files:read scope") {
		t.Errorf("the request says:\n%s", text)
	}
	if n := len(w.fake.FileDownloads()); n != 0 {
		t.Errorf("%d downloads without the scope", n)
	}
}

// imagesOf are the image blocks of a model request's first user message.
func imagesOf(r modelserver.Request) []core.Block {
	var out []core.Block
	for _, b := range r.Messages[0].Content {
		if b.Type == core.BlockImage {
			out = append(out, b)
		}
	}
	return out
}

// TestGitHubCommentImage: an image pasted into the triggering comment is
// downloaded with the installation token and reaches the model; one from
// another host is not fetched, and the model is told.
func TestGitHubCommentImage(t *testing.T) {
	w := startGitHubWith(t, func(f *fakegithub.Server) map[string]string {
		env := map[string]string{"SWITCHBOARD_SANDBOX": "none", "GITHUB_WEB_URL": f.URL}
		attachmentEnv(env)
		return env
	})
	w.fake.SetPermission("alice", "write")
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{3}, 64)...)
	body := "@sb-agent why does CI fail?\n\n![trace.png](" + w.fake.AddAttachment("image/png", png) + ")\n![elsewhere](https://images.example/x.png)"
	w.ms.Push(modelserver.Step{Text: "A flaky test."})
	c := w.fake.AddComment("acme/widgets", 5, false, "alice", body)
	if code := w.deliver("issue_comment", "", issueComment(5, false, c, "alice", body), githubSecret); code != 200 {
		t.Fatalf("comment: %d", code)
	}
	w.srv.waitIdle(w.session("github:acme/widgets#5"))
	req := w.ms.Requests()[0]
	if images := imagesOf(req); len(images) != 1 || images[0].MediaType != "image/png" || !bytes.Equal(images[0].Data, png) {
		t.Fatalf("images %+v", images)
	}
	text := requestText(req)
	for _, want := range []string{"[Attached image trace.png (72 B)]", "[Attached image x.png: not read, its address is not one of the platform's file hosts]"} {
		if !strings.Contains(text, want) {
			t.Errorf("the request lacks %q:\n%s", want, text)
		}
	}
}

// TestLinearIssueImage: an image in the delegated issue's description is
// downloaded with the installation's token and reaches the model.
func TestLinearIssueImage(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_SANDBOX": "none"}
	attachmentEnv(env)
	w := startLinear(t, env)
	jpeg := append([]byte("\xff\xd8\xff\xe0JFIF"), bytes.Repeat([]byte{9}, 40)...)
	w.issue = w.fake.SeedIssue(fakelinear.Issue{Title: "The chart is empty", Desc: "See:\n\n![chart.jpg](" + w.fake.Upload("chart.jpg", "image/jpeg", jpeg) + ")"})
	w.ms.Push(modelserver.Step{Text: "The query returns nothing."})
	as := w.created("as-image-1")
	w.srv.waitIdle(w.session(as))
	req := w.ms.Requests()[0]
	if images := imagesOf(req); len(images) != 1 || images[0].MediaType != "image/jpeg" || !bytes.Equal(images[0].Data, jpeg) {
		t.Fatalf("images %+v\n%s", images, requestText(req))
	}
	if w.fake.Downloads() != 1 {
		t.Fatalf("%d downloads", w.fake.Downloads())
	}
}
