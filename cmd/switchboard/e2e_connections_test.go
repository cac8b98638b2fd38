package main_test

import (
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestSilentSocketsKeepNoOneOut is issue 33's acceptance 1: with the
// connection cap full of sockets that never send a byte (and a read
// timeout of 30 s, which they would sit out), /healthz and a signed Slack
// webhook are both answered while the test keeps the sockets open.
func TestSilentSocketsKeepNoOneOut(t *testing.T) {
	const cap = 20
	w := startSlack(t, fakeslack.Team{ID: "T0CAP", Name: "Cap"}, map[string]string{
		"SWITCHBOARD_MAX_CONNECTIONS":        strconv.Itoa(cap),
		"SWITCHBOARD_READ_TIMEOUT_SECONDS":   "30",
		"SWITCHBOARD_HEADER_TIMEOUT_SECONDS": "30",
	})
	w.ms.Push(modelserver.Step{Text: "still here"})
	addr := w.srv.url[len("http://"):]
	for range cap + 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}

	start := time.Now()
	healthz := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(w.srv.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = &statusError{resp.StatusCode}
			}
		}
		healthz <- err
	}()
	if err := <-healthz; err != nil {
		t.Fatalf("/healthz with the cap full of silent sockets: %v", err)
	}
	t.Logf("/healthz answered %v after the cap filled", time.Since(start).Round(time.Millisecond)) // a figure, not a bound

	start = time.Now()
	m := w.fake.Human(w.team.ID, "C0CAP", "U0ALICE", "<@"+w.team.BotUserID+"> are you there?", "")
	code, took := w.event(fakeslack.Mention(m))
	if code != 200 || took > 10*time.Second {
		t.Fatalf("signed webhook: %d after %v", code, took)
	}
	t.Logf("a signed Slack webhook acked %v after /healthz", time.Since(start).Round(time.Millisecond))
	w.waitReply(w.team, "C0CAP", m.TS, "still here")
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "status " + strconv.Itoa(e.code) }
