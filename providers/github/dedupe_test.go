package github

import "testing"

// TestCommentReplayedUnderAnotherDelivery: the delivery header is not
// signed, so the same signed comment sent under a fresh delivery id must
// not queue it again; another comment does.
func TestCommentReplayedUnderAnotherDelivery(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	for _, m := range []map[string]any{
		mention(950, 8, 31, "@sb-agent look"),
		mention(950, 8, 31, "@sb-agent look"),
		mention(950, 8, 32, "@sb-agent and this"),
	} {
		if code := r.deliver("issue_comment", m); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
	}
	s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", 8))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := r.store.Pending(t.Context(), s.ID)
	if err != nil || len(pending) != 2 {
		t.Fatalf("%d inputs for two comments, one of them sent twice (%v)", len(pending), err)
	}
}
