package slack

import (
	"net/url"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestKeyOfURL: a message link of an installed workspace names its
// thread (a reply's link, with thread_ts, its thread's); another
// workspace's or another shape names none.
func TestKeyOfURL(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0URL", Name: "Url", Domain: "acme"}, true)
	for _, tt := range []struct{ raw, want string }{
		{"https://acme.slack.com/archives/C0OPS/p1700000000000100", "slack:T0URL:C0OPS:1700000000.000100"},
		{"https://acme.slack.com/archives/C0OPS/p1700000000000900?thread_ts=1700000000.000100&cid=C0OPS", "slack:T0URL:C0OPS:1700000000.000100"},
		{"https://other.slack.com/archives/C0OPS/p1700000000000100", ""},
		{"https://acme.slack.com/team/U1", ""},
		{"https://github.com/acme/app/pull/7", ""},
	} {
		u, _ := url.Parse(tt.raw)
		got, ok, err := r.p.KeyOfURL(t.Context(), u)
		if err != nil || got != tt.want || ok != (tt.want != "") {
			t.Errorf("KeyOfURL(%s) = %q, %v, %v; want %q", tt.raw, got, ok, err, tt.want)
		}
	}
}
