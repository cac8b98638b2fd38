package schedules_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/schedules"
)

type pokes struct{ n int }

func (p *pokes) Poke() { p.n++ }

// asAdmin marks every request as the admin's, as the API's auth does.
func asAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), core.Principal{Admin: true})))
	})
}

// TestHandler: create, read, list, pause, resume and delete; bad cron,
// time zone, time or target is a 400 that names the field and stores
// nothing.
func TestHandler(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	agent, err := s.CreateAgent(ctx, &core.Agent{Name: "nightly", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sessionID := res.Session.ID
	clock := &handClock{now: time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)}
	p := &pokes{}
	mux := http.NewServeMux()
	(&schedules.Handler{Store: s, Runner: p, Clock: clock}).Register(mux)
	srv := httptest.NewServer(asAdmin(mux))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}

	for _, tt := range []struct{ name, body, field string }{
		{"bad cron", `{"cron":"61 * * * *","target":{"agent":"nightly","input":"x"}}`, `field \"cron\"`},
		{"every", `{"cron":"@every 1h","target":{"agent":"nightly","input":"x"}}`, `field \"cron\"`},
		{"bad zone", `{"cron":"30 2 * * *","time_zone":"Europe/Atlantis","target":{"agent":"nightly","input":"x"}}`, `field \"time_zone\"`},
		{"zone without cron", `{"at":"2026-03-29T00:00:00Z","time_zone":"UTC","target":{"agent":"nightly","input":"x"}}`, `field \"time_zone\"`},
		{"past", `{"at":"2026-03-28T11:00:00Z","target":{"agent":"nightly","input":"x"}}`, `field \"at\"`},
		{"neither", `{"target":{"agent":"nightly","input":"x"}}`, `\"cron\"`},
		{"both", `{"cron":"@daily","at":"2026-03-29T00:00:00Z","target":{"agent":"nightly","input":"x"}}`, `field \"at\"`},
		{"no input", `{"cron":"@daily","target":{"agent":"nightly"}}`, `field \"target.input\"`},
		{"no target", `{"cron":"@daily","target":{"input":"x"}}`, `field \"target\"`},
		{"unknown agent", `{"cron":"@daily","target":{"agent":"nobody","input":"x"}}`, `field \"target.agent\"`},
		{"unknown session", `{"cron":"@daily","target":{"session_id":"ses_nope","input":"x"}}`, `field \"target.session_id\"`},
		{"unknown field", `{"cron":"@daily","tz":"UTC","target":{"agent":"nightly","input":"x"}}`, `tz`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := do("POST", "/v1/schedules", tt.body)
			if code != 400 || !strings.Contains(body, tt.field) || !strings.Contains(body, `"invalid_request"`) {
				t.Fatalf("%d %s, want 400 naming %s", code, body, tt.field)
			}
		})
	}
	if list, _, _ := s.ListSchedules(ctx, core.ScheduleQuery{}); len(list) != 0 {
		t.Fatalf("refused creates stored %d schedules", len(list))
	}

	code, body := do("POST", "/v1/schedules", `{"cron":"30 2 * * *","time_zone":"Europe/Berlin","target":{"agent":"nightly","input":"triage","tenant":"ops"}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var sc core.Schedule
	if err := json.Unmarshal([]byte(body), &sc); err != nil {
		t.Fatal(err)
	}
	// 02:30 on 29 March 2026 does not exist in Berlin: due at 03:00 CEST.
	if sc.Target.Agent != agent.ID || sc.CreatedBy != "admin" || sc.NextAt == nil || !sc.NextAt.Equal(time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)) || p.n != 1 {
		t.Fatalf("created %s (pokes %d)", body, p.n)
	}
	code, body = do("POST", "/v1/schedules", `{"at":"2026-03-28T13:00:00Z","target":{"session_id":"`+sessionID+`","input":"check the deploy"}}`)
	if code != 201 {
		t.Fatalf("create a one-off: %d %s", code, body)
	}
	var once core.Schedule
	_ = json.Unmarshal([]byte(body), &once)
	if code, body = do("GET", "/v1/schedules/"+sc.ID, ""); code != 200 || !strings.Contains(body, `"time_zone":"Europe/Berlin"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body = do("GET", "/v1/schedules?session_id="+sessionID, ""); code != 200 || !strings.Contains(body, once.ID) || strings.Contains(body, sc.ID) {
		t.Fatalf("a session's schedules: %d %s", code, body)
	}
	if code, body = do("POST", "/v1/schedules/"+sc.ID+"/pause", ""); code != 200 || !strings.Contains(body, `"paused":true`) || !strings.Contains(body, `"next_at":null`) {
		t.Fatalf("pause: %d %s", code, body)
	}
	clock.set(time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC))
	if code, body = do("POST", "/v1/schedules/"+sc.ID+"/resume", ""); code != 200 || !strings.Contains(body, `"next_at":"2026-03-31T00:30:00.000Z"`) {
		t.Fatalf("resume: %d %s", code, body)
	}
	// The one-off fires at its time; resuming it then is a 409, paused or
	// not, and changes nothing.
	clock.set(time.Date(2026, 3, 28, 13, 0, 0, 0, time.UTC))
	if err := schedules.NewRunner(s, clock, nil).FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"resume", "pause", "resume"} {
		code, body = do("POST", "/v1/schedules/"+once.ID+"/"+step, "")
		want := 200
		if step == "resume" {
			want = 409
		}
		if code != want || want == 409 && !strings.Contains(body, "fired") {
			t.Fatalf("%s a one-off that fired: %d %s, want %d", step, code, body, want)
		}
	}
	if got, err := s.GetSchedule(ctx, once.ID); err != nil || got.Fires != 1 || got.NextAt != nil {
		t.Fatalf("the fired one-off after the refused resumes: %+v, %v", got, err)
	}
	if code, body = do("DELETE", "/v1/schedules/"+sc.ID, ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, _ = do("GET", "/v1/schedules/"+sc.ID, ""); code != 404 {
		t.Fatalf("get a deleted schedule: %d", code)
	}
	if code, _ = do("POST", "/v1/schedules/sch_nope/pause", ""); code != 404 {
		t.Fatalf("pause an unknown schedule: %d", code)
	}
}

// TestHandlerPostPolicy: a schedule that posts is refused at create with a
// 400 naming the channel policy when its channel is outside the
// installation's policy, and made when it is within.
func TestHandlerPostPolicy(t *testing.T) {
	s := openStore(t)
	if _, err := s.CreateAgent(t.Context(), &core.Agent{Name: "standup", Model: "anthropic/x"}); err != nil {
		t.Fatal(err)
	}
	in := slackInstallation(t, s)
	mux := http.NewServeMux()
	(&schedules.Handler{Store: s, Openers: map[string]core.ThreadOpener{"slack": &opener{}}, Clock: &handClock{now: t0}}).Register(mux)
	srv := httptest.NewServer(asAdmin(mux))
	t.Cleanup(srv.Close)
	create := func(channel string) (int, string) {
		t.Helper()
		body := `{"cron":"0 9 * * *","target":{"agent":"standup","input":"standup","post":{"provider":"slack","installation":"` + in.ID + `","channel":"` + channel + `"}}}`
		resp, err := http.Post(srv.URL+"/v1/schedules", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if code, body := create("C0SECRET"); code != 400 || !strings.Contains(body, `field \"target.post.channel\"`) || !strings.Contains(body, "channel policy") {
		t.Fatalf("a post outside the policy: %d %s, want a 400 naming the channel policy", code, body)
	}
	if list, _, _ := s.ListSchedules(t.Context(), core.ScheduleQuery{}); len(list) != 0 {
		t.Fatalf("a refused create stored %d schedules", len(list))
	}
	if code, body := create("C0OPS"); code != 201 {
		t.Fatalf("a post within the policy: %d %s", code, body)
	}
}
