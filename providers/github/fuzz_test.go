package github

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the intake decoder and the trigger rules arbitrary
// bodies for each handled event: neither may panic, whatever arrives
// (the signature is checked first, but a bug must not be one bad secret
// away from a crash).
func FuzzDecode(f *testing.F) {
	events := []string{"ping", "installation", "installation_repositories", "issue_comment",
		"pull_request_review_comment", "pull_request_review", "issues", "pull_request", "check_run"}
	files, _ := filepath.Glob(filepath.Join(upstream, "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			for i, e := range events {
				if e == eventOf(file) {
					f.Add(uint8(i), b)
				}
			}
		}
	}
	f.Add(uint8(3), []byte(`{"action":"created","comment":{"body":"@sb-agent hi","user":{"login":"a"}},"issue":{"number":1},"installation":{"id":1},"repository":{"name":"r","owner":{"login":"o"}}}`))
	f.Add(uint8(8), []byte(`{"action":"requested_action","requested_action":{"identifier":"stop"},"check_run":{"external_id":"github:o/r#1"}}`))
	id := identity{slug: "sb-agent", label: "sb-agent"}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ev, err := Decode(events[int(which)%len(events)], body)
		if err != nil || ev == nil {
			return
		}
		d := decide(ev, id)
		if d.act == actTrigger {
			if _, _, _, err := parseKey(d.key); err != nil {
				t.Fatalf("trigger with a bad key: %v", err)
			}
		}
	})
}
