package console_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

const schedulesJSON = `{"data":[
	{"id":"sch_1","cron":"30 2 * * *","time_zone":"Europe/Berlin","target":{"agent":"agt_1","input":"triage the inbox"},"paused":false,
	 "next_at":"2030-05-07T00:30:00Z","last_fired_at":"2030-05-06T00:30:00Z","last_session_id":"ses_9","fires":3,"created_by":"admin",
	 "created_at":"2030-05-01T00:00:00Z","updated_at":"2030-05-06T00:30:00Z"},
	{"id":"sch_2","at":"2030-05-06T09:00:00Z","target":{"session_id":"ses_4","input":"[Scheduled follow-up] check CI"},"paused":true,
	 "next_at":null,"last_fired_at":null,"fires":0,"last_error":"session ses_4: archived","created_by":"ses_4",
	 "created_at":"2030-05-01T00:00:00Z","updated_at":"2030-05-06T00:30:00Z"}],"has_more":false}`

// TestSchedulesPage: the list shows each schedule's time, target, state,
// next and last fire with the action that fits; each action posts to the
// API and comes back.
func TestSchedulesPage(t *testing.T) {
	e := newEnv(t, "")
	api := fakeAPI(e, map[string]fakeAnswer{
		"GET /v1/schedules":               {200, schedulesJSON},
		"POST /v1/schedules/sch_1/pause":  {200, `{"id":"sch_1"}`},
		"POST /v1/schedules/sch_2/resume": {200, `{"id":"sch_2"}`},
		"DELETE /v1/schedules/sch_2":      {204, ""},
	})
	e.store.agents = []*core.Agent{{ID: "agt_1", Name: "nightly"}}
	c, csrf := e.signIn()
	body := e.do(req{method: "GET", path: "/console/schedules", cookie: c}).Body.String()
	for _, want := range []string{
		`<code>30 2 * * *</code> <span class="dim">Europe/Berlin</span>`,
		`new session of <a href="agents/agt_1">nightly</a>`,
		`<time datetime="2030-05-07T00:30:00Z">2030-05-07 00:30 UTC</time>`,
		`<a href="sessions/ses_9"><code>ses_9</code></a> <span class="dim">(3)</span>`,
		`<form method="post" action="schedules/sch_1/pause">`,
		`<form method="post" action="schedules/sch_2/resume">`,
		`<span class="danger">session ses_4: archived</span>`,
		`made by its agent`,
		`<form method="post" action="schedules" id="schedule-form" class="edit">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// An agent deleted since is its id.
	e.store.agents = nil
	if body := e.do(req{method: "GET", path: "/console/schedules", cookie: c}).Body.String(); !strings.Contains(body, `new session of <code>agt_1</code>`) {
		t.Errorf("a deleted agent's schedule: %s", body)
	}
	if strings.Contains(body, `action="schedules/sch_2/pause"`) || strings.Contains(body, `action="schedules/sch_1/resume"`) {
		t.Error("a paused schedule offers Pause, or an active one Resume")
	}
	for _, action := range []string{"sch_1/pause", "sch_2/resume", "sch_2/delete"} {
		rec := e.do(req{method: "POST", path: "/console/schedules/" + action, cookie: c, form: url.Values{"csrf": {csrf}}})
		if rec.Code != 303 || rec.Header().Get("Location") != "../../schedules" {
			t.Fatalf("%s: %d %q %s", action, rec.Code, rec.Header().Get("Location"), rec.Body)
		}
	}
	if n := len(api.sent("DELETE")); n != 1 {
		t.Fatalf("%d deletes", n)
	}
	if rec := e.do(req{method: "POST", path: "/console/schedules/sch_1/pause", cookie: c, form: url.Values{}}); rec.Code != 403 {
		t.Fatalf("pause without CSRF: %d", rec.Code)
	}
}

// TestScheduleCreateForm: the form posts a cron schedule or a one-off to
// the API; a time that is not one is refused on the page, and the API's
// refusal goes under the field it names, the form kept as typed.
func TestScheduleCreateForm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		form   url.Values
		answer fakeAnswer
		code   int
		sent   string
		errID  string
		errHas string
	}{
		{"cron for an agent", url.Values{"kind": {"cron"}, "cron": {"30 2 * * *"}, "time_zone": {"Europe/Berlin"}, "target": {"nightly"}, "input": {"triage"}},
			fakeAnswer{201, `{"id":"sch_3"}`}, 303, `{"cron":"30 2 * * *","time_zone":"Europe/Berlin","target":{"agent":"nightly","input":"triage"}}`, "", ""},
		{"once for a session", url.Values{"kind": {"once"}, "at": {"2030-05-06T09:00:00+02:00"}, "target": {"ses_01m8g6kwwzenk107cq35g1wgky"}, "input": {"check"}},
			fakeAnswer{201, `{"id":"sch_3"}`}, 303, `{"at":"2030-05-06T07:00:00.000Z","target":{"session_id":"ses_01m8g6kwwzenk107cq35g1wgky","input":"check"}}`, "", ""},
		{"bad time", url.Values{"kind": {"once"}, "at": {"tomorrow"}, "target": {"nightly"}, "input": {"x"}}, fakeAnswer{}, 400, "", "schedule-at-error", "RFC 3339"},
		{"bad zone", url.Values{"kind": {"cron"}, "cron": {"@daily"}, "time_zone": {"Mars/Base"}, "target": {"nightly"}, "input": {"x"}},
			fakeAnswer{400, `{"error":{"type":"invalid_request","message":"field \"time_zone\": \"Mars/Base\" is not an IANA time zone"}}`}, 400,
			`{"cron":"@daily","time_zone":"Mars/Base","target":{"agent":"nightly","input":"x"}}`, "schedule-zone-error", "not an IANA time zone"},
		{"unknown agent", url.Values{"kind": {"cron"}, "cron": {"@daily"}, "time_zone": {"UTC"}, "target": {"nobody"}, "input": {"x"}},
			fakeAnswer{400, `{"error":{"type":"invalid_request","message":"field \"target.agent\": no agent \"nobody\""}}`}, 400,
			`{"cron":"@daily","target":{"agent":"nobody","input":"x"}}`, "schedule-target-error", `no agent "nobody"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			api := fakeAPI(e, map[string]fakeAnswer{"POST /v1/schedules": tc.answer, "GET /v1/schedules": {200, `{"data":[],"has_more":false}`}})
			c, csrf := e.signIn()
			tc.form.Set("csrf", csrf)
			rec := e.do(req{method: "POST", path: "/console/schedules", cookie: c, form: tc.form})
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			posts := api.sent("POST")
			if tc.sent == "" {
				if len(posts) != 0 {
					t.Fatalf("posted %v", posts)
				}
			} else {
				if len(posts) != 1 {
					t.Fatalf("posted %d times", len(posts))
				}
				sameJSON(t, posts[0].Body, tc.sent)
			}
			if tc.errID != "" {
				body := rec.Body.String()
				if got := fieldError(body, tc.errID); !strings.Contains(got, tc.errHas) {
					t.Fatalf("under %s: %q\n%s", tc.errID, got, body)
				}
				if !strings.Contains(body, `value="`+tc.form.Get("target")+`"`) {
					t.Fatal("the form lost what was typed")
				}
			}
		})
	}
}
