package github

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func labeled(number int, updatedAt, sender string) map[string]any {
	return map[string]any{"action": "labeled", "installation": map[string]any{"id": 950},
		"repository": map[string]any{"name": "widgets", "full_name": "acme/widgets", "owner": map[string]any{"login": "acme"}},
		"sender":     map[string]any{"login": sender},
		"label":      map[string]any{"name": "sb-agent"},
		"issue":      map[string]any{"number": number, "title": "Widgets", "body": "They break.", "updated_at": updatedAt}}
}

func stopClicked(checkRun int64, number int) map[string]any {
	return map[string]any{"action": "requested_action", "installation": map[string]any{"id": 950},
		"repository":       map[string]any{"name": "widgets", "full_name": "acme/widgets", "owner": map[string]any{"login": "acme"}},
		"sender":           map[string]any{"login": "alice"},
		"requested_action": map[string]any{"identifier": stopAction},
		"check_run": map[string]any{"id": checkRun, "external_id": sessionKey("acme", "widgets", number) + "@3",
			"app": map[string]any{"slug": "sb-agent"}}}
}

// TestSignedBodyReplayedUnderAnotherDelivery: a label added and a Stop
// clicked carry no comment id, so the signed body's own identity is their
// second key: the same body sent under fresh delivery ids queues nothing
// more; another labeling (a later updated_at, or someone else) and
// another check run's Stop do.
func TestSignedBodyReplayedUnderAnotherDelivery(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	r.fake.SetPermission("bob", "write")
	pending := func() []core.Event {
		t.Helper()
		s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", 8))
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.store.Pending(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	steps := []struct {
		event   string
		payload map[string]any
		inputs  int
	}{
		{"issues", labeled(8, "2024-05-01T10:00:00Z", "alice"), 1},
		{"issues", labeled(8, "2024-05-01T10:00:00Z", "alice"), 1},
		{"issues", labeled(8, "2024-05-01T10:00:00Z", "alice"), 1},
		{"issues", labeled(8, "2024-05-01T10:05:00Z", "alice"), 2},
		{"issues", labeled(8, "2024-05-01T10:05:00Z", "bob"), 3},
		{"check_run", stopClicked(4001, 8), 4},
		{"check_run", stopClicked(4001, 8), 4},
		{"check_run", stopClicked(4001, 8), 4},
		{"check_run", stopClicked(4002, 8), 5},
	}
	for i, st := range steps {
		if code := r.deliver(st.event, st.payload); code != 200 {
			t.Fatalf("step %d: deliver %s: %d", i, st.event, code)
		}
		if n := len(pending()); n != st.inputs {
			t.Fatalf("step %d (%s): %d inputs, want %d", i, st.event, n, st.inputs)
		}
	}
	if p := pending(); p[3].Type != core.TypeUserInterrupt || p[4].Type != core.TypeUserInterrupt {
		t.Fatalf("the Stops queued %s and %s", p[3].Type, p[4].Type)
	}
}
