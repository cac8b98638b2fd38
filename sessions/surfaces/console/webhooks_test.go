package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestWebhookPages(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeVaultsAPI(e)
	c, csrf := e.signIn()
	post := func(path string, form url.Values) httpResult {
		form.Set("csrf", csrf)
		rec := e.do(req{method: "POST", path: path, cookie: c, form: form})
		return httpResult{rec.Code, rec.Header().Get("Location"), rec.Body.String()}
	}
	get := func(path string) string {
		rec := e.do(req{method: "GET", path: path, cookie: c})
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	const generated = "whsec_generatedOnceZm9vYmFyYmF6cXV4"
	const typed = "whsec_typedByTheOperatorQUJDREVGR0hJSktM"

	body := get("/console/webhooks")
	for _, want := range []string{`id="no-destinations"`, `id="destination-create"`, `<section id="dead"`, `id="no-dead"`, `id="no-pending"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the empty page lacks %q", want)
		}
	}

	t.Run("create shows a generated secret once", func(t *testing.T) {
		r := post("/console/webhooks/destinations", url.Values{"url": {"https://hooks.example.com/in"}, "level": {"user"}, "types": {"agent.message, turn.completed"}, "secret": {""}})
		if r.code != http.StatusCreated || !strings.Contains(r.body, `id="destination-secret"`) || !strings.Contains(r.body, generated) || !strings.Contains(r.body, `href="../webhooks#dest-dst_001"`) {
			t.Fatalf("create: %d\n%s", r.code, r.body)
		}
		calls := f.posted()
		if len(calls) != 1 || calls[0].Body != `{"url":"https://hooks.example.com/in","level":"user","types":["agent.message","turn.completed"]}` {
			t.Fatalf("calls %+v", calls)
		}
		body := get("/console/webhooks")
		if strings.Contains(body, generated) {
			t.Fatal("the secret is shown again")
		}
		for _, want := range []string{`id="dest-dst_001"`, `data-status="active"`, `id="pause-dst_001"`, `<code>agent.message</code>, <code>turn.completed</code>`} {
			if !strings.Contains(body, want) {
				t.Errorf("the list lacks %q", want)
			}
		}
	})

	t.Run("a typed secret is never shown", func(t *testing.T) {
		f.refuse["POST /v1/destinations"] = `field "url": "ftp://x" is not an absolute http or https URL`
		r := post("/console/webhooks/destinations", url.Values{"url": {"ftp://x"}, "level": {"progress"}, "secret": {typed}})
		delete(f.refuse, "POST /v1/destinations")
		if r.code != 400 || strings.Contains(r.body, typed) || !strings.Contains(r.body, `id="dest-url-error"`) || !strings.Contains(r.body, `id="destination-create-cleared"`) ||
			!strings.Contains(r.body, `value="ftp://x"`) || !strings.Contains(r.body, `<option value="progress" selected>`) {
			t.Fatalf("refused: %d\n%s", r.code, r.body)
		}
		r = post("/console/webhooks/destinations", url.Values{"url": {"https://hooks.example.com/b"}, "secret": {typed}})
		if r.code != http.StatusSeeOther || r.location != "../webhooks#dest-dst_002" || strings.Contains(r.body, typed) {
			t.Fatalf("create with a secret: %d %q", r.code, r.location)
		}
		if calls := f.posted(); !strings.Contains(calls[len(calls)-1].Body, typed) {
			t.Fatal("the typed secret did not reach the API")
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		for _, tc := range []struct{ action, wantStatus, wantButton string }{
			{"pause", "paused", `id="resume-dst_001"`},
			{"resume", "active", `id="pause-dst_001"`},
		} {
			n := len(f.posted())
			r := post("/console/webhooks/destinations/dst_001/"+tc.action, url.Values{})
			if r.code != http.StatusSeeOther || r.location != "../../../webhooks" {
				t.Fatalf("%s: %d %q", tc.action, r.code, r.location)
			}
			if calls := f.posted(); len(calls) != n+1 || calls[n].Method != "POST" || calls[n].Path != "/v1/destinations/dst_001/"+tc.action {
				t.Fatalf("%s calls %+v", tc.action, calls[n:])
			}
			if body := get("/console/webhooks"); !strings.Contains(body, `data-destination="dst_001" data-status="`+tc.wantStatus+`"`) || !strings.Contains(body, tc.wantButton) {
				t.Errorf("after %s the page lacks status %s or %s", tc.action, tc.wantStatus, tc.wantButton)
			}
		}
		if r := post("/console/webhooks/destinations/dst_001/explode", url.Values{}); r.code != 404 {
			t.Fatalf("an unknown action: %d", r.code)
		}
		if r := post("/console/webhooks/destinations/dst_404/pause", url.Values{}); r.code != 404 || !strings.Contains(r.body, `destination &#34;dst_404&#34; not found`) {
			t.Fatalf("pause of a missing destination: %d %s", r.code, r.body)
		}
	})

	t.Run("dead letters and redeliver", func(t *testing.T) {
		f.addDelivery("dlv_a", "dst_001", core.DeliveryDead)
		f.addDelivery("dlv_b", "dst_001", core.DeliveryDead)
		f.addDelivery("dlv_c", "dst_001", core.DeliveryPending)
		body := get("/console/webhooks")
		dead := body[strings.Index(body, `<section id="dead"`):strings.Index(body, `<section id="pending"`)]
		for _, want := range []string{`data-delivery="dlv_a"`, `data-delivery="dlv_b"`, `href="webhooks/deliveries/dlv_a"`, `action="webhooks/deliveries/dlv_b/redeliver"`, "HTTP 503: HTTP 503 from the receiver"} {
			if !strings.Contains(dead, want) {
				t.Errorf("the dead section lacks %q", want)
			}
		}
		if strings.Contains(dead, "dlv_c") {
			t.Error("a pending delivery is in the dead section")
		}
		pending := body[strings.Index(body, `<section id="pending"`):]
		if !strings.Contains(pending, `data-delivery="dlv_c"`) || strings.Contains(pending, "dlv_c/redeliver") {
			t.Error("the pending delivery is missing, or offers Redeliver")
		}

		detail := get("/console/webhooks/deliveries/dlv_b")
		for _, want := range []string{`id="delivery-state">dead`, `id="delivery-event-type">agent.message`, `id="attempt-count">9`, "HTTP 503 from the receiver", `<td>503</td>`, `id="redeliver"`, `action="../../webhooks/deliveries/dlv_b/redeliver"`} {
			if !strings.Contains(detail, want) {
				t.Errorf("the delivery page lacks %q", want)
			}
		}
		n := len(f.posted())
		r := post("/console/webhooks/deliveries/dlv_b/redeliver", url.Values{})
		if r.code != http.StatusSeeOther || r.location != "../../../webhooks/deliveries/dlv_b" {
			t.Fatalf("redeliver: %d %q", r.code, r.location)
		}
		if calls := f.posted(); len(calls) != n+1 || calls[n].Method != "POST" || calls[n].Path != "/v1/deliveries/dlv_b/redeliver" {
			t.Fatalf("redeliver calls %+v", calls[n:])
		}
		if detail := get("/console/webhooks/deliveries/dlv_b"); !strings.Contains(detail, `id="delivery-state">pending`) || strings.Contains(detail, `id="redeliver"`) {
			t.Error("the redelivered delivery is not shown pending")
		}
		// A pending delivery is the API's to refuse.
		if r := post("/console/webhooks/deliveries/dlv_c/redeliver", url.Values{}); r.code != http.StatusConflict || !strings.Contains(r.body, "is pending") {
			t.Fatalf("redeliver of a pending one: %d %s", r.code, r.body)
		}
	})

	t.Run("deliveries list", func(t *testing.T) {
		body := get("/console/webhooks/deliveries?state=dead&destination=dst_001")
		if !strings.Contains(body, `data-delivery="dlv_a"`) || strings.Contains(body, `data-delivery="dlv_c"`) || !strings.Contains(body, `<option value="dead" selected>`) {
			t.Fatalf("filtered list:\n%s", body)
		}
		rec := e.do(req{method: "GET", path: "/console/webhooks/deliveries?state=lost", cookie: c})
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `id="filter-error"`) {
			t.Fatalf("a bad state: %d %s", rec.Code, rec.Body)
		}
		if rec := e.do(req{method: "GET", path: "/console/webhooks/deliveries/dlv_zzz", cookie: c}); rec.Code != 404 {
			t.Fatalf("a missing delivery: %d", rec.Code)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if r := post("/console/webhooks/destinations/dst_002/delete", url.Values{}); r.code != http.StatusSeeOther {
			t.Fatalf("delete: %d", r.code)
		}
		if calls := f.posted(); calls[len(calls)-1].Method != "DELETE" || calls[len(calls)-1].Path != "/v1/destinations/dst_002" {
			t.Fatalf("delete call %+v", calls[len(calls)-1])
		}
	})

	// Nothing in these pages is inline.
	for _, p := range []string{"/console/webhooks", "/console/webhooks/deliveries", "/console/webhooks/deliveries/dlv_a"} {
		if body := get(p); containsAny(body, "style=", "<style", "<script>", "onclick=") {
			t.Errorf("%s has inline style or script", p)
		}
	}
}
