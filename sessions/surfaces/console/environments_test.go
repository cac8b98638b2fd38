package console_test

import (
	"net/url"
	"strings"
	"testing"
)

const environmentJSON = `{"id":"env_1","name":"tools","packages":{"apt":["jq"]},"network":{"mode":"allowlist","allowed_hosts":["api.github.com"]},
	"resources":{"memory_mb":512},"created_at":"2030-05-06T07:00:00Z","updated_at":"2030-05-06T07:00:00Z"}`

func TestEnvironmentForm(t *testing.T) {
	form := url.Values{
		"name": {"tools"}, "apt": {"jq  curl\n"}, "env": {"GOFLAGS=-mod=mod"}, "mode": {"allowlist"},
		"allowed_hosts": {"api.github.com\n*.githubusercontent.com"}, "memory_mb": {"512"}, "cpus": {"1.5"},
	}
	sent := `{"name":"tools","description":"","image":"","packages":{"apt":["jq","curl"]},"env":{"GOFLAGS":"-mod=mod"},
		"network":{"mode":"allowlist","allowed_hosts":["api.github.com","*.githubusercontent.com"]},"credentials":[],
		"resources":{"cpus":1.5,"memory_mb":512},"idle_timeout_seconds":0,"metadata":{}}`
	tests := []struct {
		name, path, endpoint string
		answer               fakeAnswer
		code                 int
		location             string
		errorID, errorHas    string
	}{
		{"create", "/console/environments", "POST /v1/environments", fakeAnswer{201, environmentJSON}, 303, "environments/env_1", "", ""},
		{"save", "/console/environments/env_1", "POST /v1/environments/env_1", fakeAnswer{200, environmentJSON}, 303, "../environments/env_1", "", ""},
		{
			"a refusal goes under its field", "/console/environments", "POST /v1/environments",
			fakeAnswer{400, `{"error":{"type":"invalid_request","message":"packages.apt[1] \"curl\": want a package name"}}`}, 400, "",
			"env-apt-error", `packages.apt[1] "curl"`,
		},
		{
			"a refusal naming the name", "/console/environments", "POST /v1/environments",
			fakeAnswer{400, `{"error":{"type":"invalid_request","message":"field \"name\" is required"}}`}, 400, "",
			"env-name-error", `field "name" is required`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			api := fakeAPI(e, map[string]fakeAnswer{tc.endpoint: tc.answer, "GET /v1/environments/env_1": {200, environmentJSON}})
			c, csrf := e.signIn()
			f := url.Values{"csrf": {csrf}}
			for k, v := range form {
				f[k] = v
			}
			rec := e.do(req{method: "POST", path: tc.path, cookie: c, form: f})
			if rec.Code != tc.code || rec.Header().Get("Location") != tc.location {
				t.Fatalf("status %d to %q, want %d to %q: %s", rec.Code, rec.Header().Get("Location"), tc.code, tc.location, rec.Body)
			}
			posts := api.sent("POST")
			if len(posts) != 1 {
				t.Fatalf("posted %d times", len(posts))
			}
			sameJSON(t, posts[0].Body, sent)
			if tc.errorID != "" {
				body := rec.Body.String()
				if got := fieldError(body, tc.errorID); !strings.Contains(got, tc.errorHas) {
					t.Fatalf("under %s: %q\n%s", tc.errorID, got, body)
				}
				if !strings.Contains(body, `*.githubusercontent.com</textarea>`) {
					t.Fatal("the form lost what was typed")
				}
			}
		})
	}
}

func TestEnvironmentDelete(t *testing.T) {
	e := newEnv(t, "")
	api := fakeAPI(e, map[string]fakeAnswer{
		"GET /v1/environments/env_1":    {200, environmentJSON},
		"DELETE /v1/environments/env_1": {204, ""},
		"GET /v1/agents": {200, `{"data":[{"id":"agt_1","name":"builder","version":1,"model":"anthropic/x","system":"","limits":{},"environment":"tools"},
			{"id":"agt_2","name":"other","version":1,"model":"anthropic/x","system":"","limits":{}}],"has_more":false}`},
	})
	c, csrf := e.signIn()
	edit := e.do(req{method: "GET", path: "/console/environments/env_1", cookie: c}).Body.String()
	if !strings.Contains(edit, `href="../environments/env_1/delete"`) || !strings.Contains(edit, `value="jq"`) {
		t.Fatalf("the edit page lacks the delete link or the packages:\n%s", edit)
	}
	confirm := e.do(req{method: "GET", path: "/console/environments/env_1/delete", cookie: c}).Body.String()
	if !strings.Contains(confirm, `id="environment-delete-form"`) || !strings.Contains(confirm, `>builder</a>`) || strings.Contains(confirm, ">other</a>") {
		t.Fatalf("the confirmation does not name the agent using it:\n%s", confirm)
	}
	if len(api.sent("DELETE")) != 0 {
		t.Fatal("deleted before the confirmation was posted")
	}
	rec := e.do(req{method: "POST", path: "/console/environments/env_1/delete", cookie: c, form: url.Values{"csrf": {csrf}}})
	if rec.Code != 303 || rec.Header().Get("Location") != "../../environments" {
		t.Fatalf("delete: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if d := api.sent("DELETE"); len(d) != 1 || d[0].Path != "/v1/environments/env_1" {
		t.Fatalf("deletes %v", d)
	}
}

func TestEnvironmentsList(t *testing.T) {
	e := newEnv(t, "")
	answers := map[string]fakeAnswer{"GET /v1/environments": {200, `{"data":[],"has_more":false}`}}
	fakeAPI(e, answers)
	c, _ := e.signIn()
	if body := e.do(req{method: "GET", path: "/console/environments", cookie: c}).Body.String(); !strings.Contains(body, `id="no-environments"`) {
		t.Fatal("no empty state")
	}
	answers["GET /v1/environments"] = fakeAnswer{200, `{"data":[` + environmentJSON + `],"has_more":false}`}
	body := e.do(req{method: "GET", path: "/console/environments", cookie: c}).Body.String()
	for _, want := range []string{`<a href="environments/env_1">tools</a>`, "allowlist (1 host)", `id="new-environment"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
}
