package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// testClock is the schedules' clock of a test build: a file the test
// writes, and SIGUSR1 to the gateway to say it moved.
type testClock struct {
	t    *testing.T
	path string
}

func newTestClock(t *testing.T, at string) *testClock {
	c := &testClock{t: t, path: filepath.Join(t.TempDir(), "clock")}
	c.write(at)
	return c
}

// write sets the file's time in one step (a new file renamed over the
// old): the gateway reads the file whenever it asks the time, and a file
// being rewritten in place can read empty.
func (c *testClock) write(at string) {
	c.t.Helper()
	if err := os.WriteFile(c.path+".new", []byte(at), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(c.path+".new", c.path); err != nil {
		c.t.Fatal(err)
	}
}

// move sets the time and tells the gateway.
func (c *testClock) move(s *server, at string) {
	c.t.Helper()
	c.write(at)
	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		c.t.Fatal(err)
	}
}

type scheduleView struct {
	ID          string  `json:"id"`
	NextAt      *string `json:"next_at"`
	LastFiredAt *string `json:"last_fired_at"`
	Fires       int     `json:"fires"`
}

func (s *server) schedule(id string) scheduleView {
	s.t.Helper()
	code, raw := s.do("GET", "/v1/schedules/"+id, nil)
	if code != 200 {
		s.t.Fatalf("get schedule: %d %s", code, raw)
	}
	var v scheduleView
	mustJSON(s.t, raw, &v)
	return v
}

// scheduled counts the session's logged messages that a schedule sent.
func scheduled(evs []event) int {
	n := 0
	for _, e := range evs {
		var b struct {
			ScheduleID string `json:"schedule_id"`
		}
		if e.Type == "user.message" && json.Unmarshal(e.Body, &b) == nil && b.ScheduleID != "" {
			n++
		}
	}
	return n
}

// TestScheduleFiresOnce: 02:30 every day in Europe/Berlin, driven by a
// clock the test moves. Each due time fires once: across a SIGKILL and a
// restart; three days missed while the gateway was down fire once at
// start; the time the clocks skip in March fires at 03:00, and the time
// they repeat in October fires once.
func TestScheduleFiresOnce(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Text: "Checked."} }
	clock := newTestClock(t, "2026-03-27T12:00:00Z")
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_TEST_CLOCK_FILE"] = clock.path
	srv := startServer(t, t.TempDir(), env)

	code, raw := srv.do("POST", "/v1/sessions", map[string]any{"agent": "default"})
	if code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	var sess struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &sess)
	code, raw = srv.do("POST", "/v1/schedules", map[string]any{"cron": "30 2 * * *", "time_zone": "Europe/Berlin",
		"target": map[string]any{"session_id": sess.ID, "input": "nightly check"}})
	if code != 201 {
		t.Fatalf("create schedule: %d %s", code, raw)
	}
	var sc scheduleView
	mustJSON(t, raw, &sc)

	// fire moves the clock to at, waits for the fire's turn, and checks
	// the fires so far and the next due time.
	fire := func(s *server, at string, fires int, next string) {
		t.Helper()
		clock.move(s, at)
		s.waitFor(sess.ID, "the fire at "+at, func(st sessionState, evs []event) bool {
			return st.Status == "idle" && scheduled(evs) >= fires && count(evs, "turn.completed") >= fires
		})
		v := s.schedule(sc.ID)
		if evs := s.events(sess.ID); scheduled(evs) != fires || v.Fires != fires || v.NextAt == nil || *v.NextAt != next {
			t.Fatalf("after %s: %d inputs, fires %d, next %v; want %d, next %s", at, scheduled(evs), v.Fires, v.NextAt, fires, next)
		}
	}
	if sc.NextAt == nil || *sc.NextAt != "2026-03-28T01:30:00.000Z" {
		t.Fatalf("first due %v", sc.NextAt)
	}
	fire(srv, "2026-03-28T01:30:00Z", 1, "2026-03-29T01:00:00.000Z") // 02:30 is skipped on the 29th: 03:00 CEST
	fire(srv, "2026-03-29T01:00:00Z", 2, "2026-03-30T00:30:00.000Z")

	// SIGKILL and restart at the same time: nothing fires again.
	srv.kill()
	srv = srv.restart()
	fire(srv, "2026-03-30T00:30:00Z", 3, "2026-03-31T00:30:00.000Z")

	// Down for three days: the missed times fire once, at start.
	srv.kill()
	clock.write("2026-04-03T12:00:00Z")
	srv = srv.restart()
	srv.waitFor(sess.ID, "the missed times' fire", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && scheduled(evs) == 4 && count(evs, "turn.completed") == 4
	})
	if v := srv.schedule(sc.ID); v.Fires != 4 || *v.NextAt != "2026-04-04T00:30:00.000Z" || *v.LastFiredAt != "2026-03-31T00:30:00.000Z" {
		t.Fatalf("after the missed times %+v", v)
	}

	// October: 02:30 happens twice on the 25th and fires the first time
	// only (00:30 UTC, summer time); the next is the 26th.
	srv.kill()
	clock.write("2026-10-24T12:00:00Z")
	srv = srv.restart()
	srv.waitFor(sess.ID, "the fire for April to October", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && scheduled(evs) == 5 && count(evs, "turn.completed") == 5
	})
	if v := srv.schedule(sc.ID); *v.NextAt != "2026-10-25T00:30:00.000Z" {
		t.Fatalf("next before the fall-back %+v", v)
	}
	fire(srv, "2026-10-25T00:30:00Z", 6, "2026-10-26T01:30:00.000Z")
	fire(srv, "2026-10-26T01:30:00Z", 7, "2026-10-27T01:30:00.000Z")
	if reqs := ms.Requests(); len(reqs) != 7 {
		t.Fatalf("%d model requests for 7 fires", len(reqs))
	}
}

// TestScheduleToolFollowUp: in a Slack thread the model schedules a
// follow-up of its own session in an hour; the session rests idle with
// next_wake_at, and when the clock reaches it the follow-up's turn runs
// and its answer is posted in the same thread.
func TestScheduleToolFollowUp(t *testing.T) {
	clock := newTestClock(t, "2026-05-04T09:00:00Z")
	w := startSlack(t, fakeslack.Team{ID: "T0SCH", Name: "Sched"}, map[string]string{"SWITCHBOARD_TEST_CLOCK_FILE": clock.path})
	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "tu_sched", Name: "schedule", Input: map[string]string{"in": "1h", "message": "check whether the deploy finished"}}}},
		modelserver.Step{Text: "I'll look again in an hour."},
	)
	m := w.fake.Human(w.team.ID, "C0SCH", "U0ALICE", "<@"+w.team.BotUserID+"> deploy v2 and tell me how it went", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, "C0SCH", m.TS, "I'll look again in an hour.")
	id := w.session(w.team.ID, "C0SCH", m.TS)
	w.srv.waitFor(id, "the first turn", func(st sessionState, _ []event) bool { return st.Status == "idle" })
	var view struct {
		Status     string  `json:"status"`
		NextWakeAt *string `json:"next_wake_at"`
	}
	_, raw := w.srv.do("GET", "/v1/sessions/"+id, nil)
	mustJSON(t, raw, &view)
	if view.Status != "idle" || view.NextWakeAt == nil || *view.NextWakeAt != "2026-05-04T10:00:00.000Z" {
		t.Fatalf("resting session %s", raw)
	}

	w.ms.Push(modelserver.Step{Text: "The deploy of v2 finished: all green."})
	clock.move(w.srv, "2026-05-04T10:00:00Z")
	w.waitReply(w.team, "C0SCH", m.TS, "The deploy of v2 finished: all green.")
	_, evs := w.srv.waitFor(id, "the follow-up's turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	if scheduled(evs) != 1 {
		t.Fatalf("the follow-up queued %d inputs", scheduled(evs))
	}
	reqs := w.ms.Requests()
	last := reqs[len(reqs)-1].Messages
	if text := last[len(last)-1].Content[len(last[len(last)-1].Content)-1].Text; !strings.Contains(text, "[Scheduled follow-up] check whether the deploy finished") {
		t.Fatalf("the follow-up's request ends with %q", text)
	}
	_, raw = w.srv.do("GET", "/v1/sessions/"+id, nil)
	if strings.Contains(string(raw), "next_wake_at") {
		t.Fatalf("a session with nothing scheduled shows %s", raw)
	}
}

// TestScheduleInSlackChannel: a schedule of an agent that posts in a
// Slack channel: at its time the message is posted in the channel, a new
// session starts with that message's thread as its origin, and its
// answer is posted in the thread. A post target that cannot be is a 400
// naming the field.
func TestScheduleInSlackChannel(t *testing.T) {
	clock := newTestClock(t, "2026-05-04T09:00:00Z")
	w := startSlack(t, fakeslack.Team{ID: "T0CHN", Name: "Channel"}, map[string]string{"SWITCHBOARD_TEST_CLOCK_FILE": clock.path})
	ins := listData[struct {
		ID string `json:"id"`
	}](w.srv, "/v1/installations?provider=slack")
	post := map[string]any{"provider": "slack", "installation": ins[0].ID, "channel": "C0OPS"}
	for _, tt := range []struct {
		name  string
		post  map[string]any
		field string
	}{
		{"unknown provider", map[string]any{"provider": "teams", "installation": ins[0].ID, "channel": "C0OPS"}, "target.post.provider"},
		{"unknown installation", map[string]any{"provider": "slack", "installation": "ins_nope", "channel": "C0OPS"}, "target.post.installation"},
		{"no channel", map[string]any{"provider": "slack", "installation": ins[0].ID}, "target.post.channel"},
	} {
		code, raw := w.srv.do("POST", "/v1/schedules", map[string]any{"cron": "0 9 * * *", "target": map[string]any{"agent": "default", "input": "x", "post": tt.post}})
		if code != 400 || !strings.Contains(string(raw), tt.field) {
			t.Fatalf("%s: %d %s, want 400 naming %s", tt.name, code, raw, tt.field)
		}
	}
	code, raw := w.srv.do("POST", "/v1/schedules", map[string]any{"cron": "0 10 * * 1-5", "time_zone": "UTC",
		"target": map[string]any{"agent": "default", "input": "Post the standup summary.", "post": post}})
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	w.ms.Push(modelserver.Step{Text: "Standup: nothing is on fire."})
	clock.move(w.srv, "2026-05-04T10:00:00Z")
	var head fakeslack.Message
	waitUntil(t, "the scheduled message in the channel", func() bool {
		for _, m := range w.fake.Channel("C0OPS") {
			if m.ThreadTS == "" && strings.Contains(m.Text, "Scheduled: Post the standup summary.") {
				head = m
				return true
			}
		}
		return false
	})
	w.waitReply(w.team, "C0OPS", head.TS, "Standup: nothing is on fire.")
	id := w.session(w.team.ID, "C0OPS", head.TS)
	st, evs := w.srv.waitFor(id, "the scheduled session's turn", func(st sessionState, _ []event) bool { return st.Status == "idle" })
	if st.Tenant != "slack:"+w.team.ID || scheduled(evs) != 1 {
		t.Fatalf("the scheduled session %+v, %d scheduled inputs", st, scheduled(evs))
	}
}
