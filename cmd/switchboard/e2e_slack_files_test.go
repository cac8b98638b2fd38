package main_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestSlackFilesAfterTheAck: a mention with a file whose download the
// fake Slack holds is answered (200) while the download is held, the
// file recorded with the input (its Slack id, address, name and size);
// three retries of the event, sent while the turn waits for the file,
// download nothing; once released, the file is downloaded once and the
// model's request holds it.
func TestSlackFilesAfterTheAck(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_SANDBOX": "none",
		// Far past the test's own ceilings: the hold, not the limit,
		// decides when the download ends.
		"SWITCHBOARD_ATTACHMENT_TIMEOUT_SECONDS": "600"}
	attachmentEnv(env)
	w := startSlack(t, fakeslack.Team{ID: "T0LATE", Name: "Late files"}, env)
	log := []byte("step 3: cannot find module\n")
	file := w.fake.Upload(w.team.ID, "build.log", "text/plain", log, 0)
	started, release := w.fake.HoldFile(file.ID)
	defer release()
	w.ms.Push(modelserver.Step{Text: "Step 3 lacks a module."})
	m := w.fake.Human(w.team.ID, "C0LATE", "U0ALICE", "<@"+w.team.BotUserID+"> why does the build fail?", "", file)
	body := fakeslack.Event{Team: w.team, Inner: fakeslack.Mention(m)}.JSON()
	// A download before the answer would hold it until the attachment
	// limit: the client gives up long before.
	client := &http.Client{Timeout: patience}
	deliver := func(retry int) {
		t.Helper()
		req := fakeslack.SignedRequest(w.srv.url+"/webhooks/slack", slackSecret, time.Now(), "application/json", body)
		if retry > 0 {
			req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("delivery %d, the file's download held: %v", retry, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("delivery %d: %d", retry, resp.StatusCode)
		}
		t.Logf("delivery %d answered in %s, the file's download held", retry, time.Since(start).Round(time.Millisecond))
	}

	deliver(0)
	id := w.session(w.team.ID, "C0LATE", m.TS)
	select {
	case <-started:
	case <-time.After(patience):
		t.Fatal("the turn never asked for the file")
	}
	for retry := 1; retry <= 3; retry++ {
		deliver(retry)
	}
	if n := len(w.fake.FileDownloads()); n != 1 {
		t.Fatalf("%d downloads while the first is held, want 1", n)
	}
	release()

	w.waitReply(w.team, "C0LATE", m.TS, "Step 3 lacks a module.")
	_, evs := w.srv.waitIdle(id)
	if n := len(w.fake.FileDownloads()); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
	if count(evs, "user.message") != 1 || count(evs, "turn.started") != 1 || count(evs, core.TypeAttachmentsFetched) != 1 {
		t.Fatalf("events %v", types(evs))
	}
	for _, e := range evs {
		switch e.Type {
		case "user.message":
			var b core.MessageBody
			mustJSON(t, e.Body, &b)
			a := b.Attachments
			if len(a) != 1 || a[0].ID != "" || a[0].Source == nil || a[0].Source.FileID != file.ID || a[0].Source.URL != file.URLPrivateDownload ||
				a[0].Name != "build.log" || a[0].Size != int64(len(log)) {
				t.Errorf("the input's attachments: %s", e.Body)
			}
		case core.TypeAttachmentsFetched:
			var b core.AttachmentsFetchedBody
			mustJSON(t, e.Body, &b)
			if len(b.Attachments) != 1 || !strings.HasPrefix(b.Attachments[0].ID, core.PrefixAttachment+"_") {
				t.Errorf("fetched: %s", e.Body)
			}
		}
	}
	reqs := w.ms.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if text := requestText(reqs[0]); !strings.Contains(text, "[Attached file build.log (27 B)]\n"+string(log)) {
		t.Fatalf("the model's request:\n%s", text)
	}
	raw, _ := json.Marshal(evs)
	if strings.Contains(string(raw), w.env["SLACK_BOT_TOKEN"]) {
		t.Error("the log holds the bot token")
	}
}
