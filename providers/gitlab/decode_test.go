package gitlab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fixture decodes a payload of fixtures/fakegitlab/testdata, written from
// GitLab's documentation.
func fixture(t *testing.T, name string) hook {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "fakegitlab", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var h hook
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestDecideDocumentedPayloads(t *testing.T) {
	id := identity{username: "sb-agent", label: "sb-agent"}
	tests := []struct {
		file, event, key, discussion, sha string
		note                              int64
	}{
		{"note_hook_merge_request.json", eventNote, "gitlab:acme/platform/widgets!1", "6a9c1750b37d513a43987b574953fceb50b03ce7", "89abcdef0123456789abcdef0123456789abcdef", 1244},
		{"note_hook_issue.json", eventNote, "gitlab:acme/platform/widgets#17", "a3f1c2d4e5b6978812ab34cd56ef7890a1b2c3d4", "", 1241},
		{"merge_request_hook_label_added.json", eventMR, "gitlab:acme/platform/widgets!1", "", "89abcdef0123456789abcdef0123456789abcdef", 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			d, err := decide(tc.event, fixture(t, tc.file), id)
			if err != nil {
				t.Fatal(err)
			}
			if d.act != actMessage || !d.mentioned || d.key != tc.key || d.ref.Discussion != tc.discussion || d.ref.HeadSHA != tc.sha ||
				d.ref.NoteID != tc.note || d.ref.ProjectID != 42 || d.ref.Username != "alice" || d.identity == "" {
				t.Fatalf("decision %+v", d)
			}
			if !keyPattern.MatchString(d.key) {
				t.Fatalf("key %q does not match the grammar", d.key)
			}
		})
	}
}

func TestDecideNotes(t *testing.T) {
	id := identity{username: "sb-agent", label: "sb-agent"}
	tests := []struct {
		name    string
		edit    func(h *hook, n map[string]any)
		act     act
		answer  string
		mention bool
	}{
		{"a mention", nil, actMessage, "", true},
		{"stop", func(_ *hook, n map[string]any) { n["note"] = "@sb-agent stop" }, actInterrupt, "", true},
		{"retry", func(_ *hook, n map[string]any) { n["note"] = "@SB-Agent retry." }, actRetry, "", true},
		{"allow", func(_ *hook, n map[string]any) { n["note"] = "@sb-agent allow" }, actAnswer, "allow", true},
		{"deny", func(_ *hook, n map[string]any) { n["note"] = "@sb-agent deny!" }, actAnswer, "deny", true},
		{"another user's name", func(_ *hook, n map[string]any) { n["note"] = "@sb-agent-two look" }, actMessage, "", false},
		{"an email address", func(_ *hook, n map[string]any) { n["note"] = "mail ops@sb-agent.example" }, actMessage, "", false},
		{"a reply without a mention steers", func(_ *hook, n map[string]any) { n["note"] = "the blue one" }, actMessage, "", false},
		{"a reply on a diff line steers", func(_ *hook, n map[string]any) { n["note"], n["type"] = "the blue one", "DiffNote" }, actMessage, "", false},
		{"a single comment without a mention", func(_ *hook, n map[string]any) { n["note"], n["type"] = "the blue one", nil }, actIgnore, "", false},
		{"the app's own note", func(h *hook, _ map[string]any) { h.User.Username = "sb-agent" }, actIgnore, "", false},
		{"a marked note", func(_ *hook, n map[string]any) { n["note"] = "@sb-agent allow\n\n<!-- switchboard:ses_1:3 -->" }, actIgnore, "", false},
		{"an edit", func(_ *hook, n map[string]any) { n["action"] = "update" }, actIgnore, "", false},
		{"a system note", func(_ *hook, n map[string]any) { n["system"] = true }, actIgnore, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fixture(t, "note_hook_merge_request.json")
			var n map[string]any
			if err := json.Unmarshal(h.Attributes, &n); err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(&h, n)
			}
			h.Attributes, _ = json.Marshal(n)
			d, err := decide(eventNote, h, id)
			if err != nil {
				t.Fatal(err)
			}
			if d.act != tc.act || d.answer != tc.answer || (d.act != actIgnore && d.mentioned != tc.mention) {
				t.Fatalf("act %s answer %q mentioned %v (%s), want %s %q %v", d.act, d.answer, d.mentioned, d.why, tc.act, tc.answer, tc.mention)
			}
		})
	}
}

func TestDecideLabels(t *testing.T) {
	h := fixture(t, "merge_request_hook_label_added.json")
	for _, tc := range []struct {
		label string
		act   act
	}{{"sb-agent", actMessage}, {"other", actIgnore}} {
		d, err := decide(eventMR, h, identity{username: "sb-agent", label: tc.label})
		if err != nil || d.act != tc.act {
			t.Fatalf("label %s: %s (%v), want %s", tc.label, d.act, err, tc.act)
		}
	}
	// Added by the app's user (its own quick action, a tool): the loop
	// guard.
	own := h
	own.User.Username = "SB-Agent"
	if d, _ := decide(eventMR, own, identity{username: "sb-agent", label: "sb-agent"}); d.act != actIgnore {
		t.Fatalf("the app's own label: %s", d.act)
	}
	// Already there before the update: not added now.
	h.Changes.Labels.Previous = h.Changes.Labels.Current
	if d, _ := decide(eventMR, h, identity{username: "sb-agent", label: "sb-agent"}); d.act != actIgnore {
		t.Fatalf("a label kept: %s", d.act)
	}
}
