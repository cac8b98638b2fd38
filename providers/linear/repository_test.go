package linear

import (
	"slices"
	"testing"
)

// TestChooseRepository is acceptance 4's repository choice: Linear's
// suggestions rank the granted repositories for the session's issue; the
// most likely one is taken when confident enough, else the agent asks
// once, with the repositories as options; a session is asked about once.
func TestChooseRepository(t *testing.T) {
	granted := []string{"acme/widgets", "acme/gadgets", "acme/docs"}
	for _, tc := range []struct {
		name        string
		suggestions []suggestion
		want        string
	}{
		{"confident", []suggestion{{"acme/widgets", 0.35}, {"acme/gadgets", 0.92}, {"acme/other", 0.99}}, "acme/gadgets"},
		{"not confident", []suggestion{{"acme/widgets", 0.4}, {"acme/gadgets", 0.3}}, ""},
		{"no suggestion", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.fake.suggestions = tc.suggestions
			if code := r.deliver(created("as-repo")); code != 200 {
				t.Fatalf("created: %d", code)
			}
			s := r.sessionOf("as-repo")
			for range 2 {
				got, err := r.p.ChooseRepository(t.Context(), s, "github.com", granted)
				if err != nil || got != tc.want {
					t.Fatalf("chose %q, %v; want %q", got, err, tc.want)
				}
			}
			r.fake.mu.Lock()
			defer r.fake.mu.Unlock()
			want := []suggestionCall{{Issue: "issue-1", AgentSession: "as-repo", Candidates: []repoRef{
				{"github.com", "acme/widgets"}, {"github.com", "acme/gadgets"}, {"github.com", "acme/docs"}}}}
			if !slices.EqualFunc(r.fake.asked, want, func(a, b suggestionCall) bool {
				return a.Issue == b.Issue && a.AgentSession == b.AgentSession && slices.Equal(a.Candidates, b.Candidates)
			}) {
				t.Fatalf("suggestions asked %+v, want %+v", r.fake.asked, want)
			}
			var els []activity
			for _, a := range r.fake.activities {
				if a.kind() == "elicitation" {
					els = append(els, a)
				}
			}
			if tc.want != "" {
				if len(els) != 0 {
					t.Fatalf("asked although Linear was confident: %+v", els)
				}
				return
			}
			wantOpts := []option{{"acme/widgets", "https://github.com/acme/widgets"}, {"acme/gadgets", "https://github.com/acme/gadgets"},
				{"acme/docs", "https://github.com/acme/docs"}}
			if len(els) != 1 || !slices.Equal(els[0].Select, wantOpts) || els[0].AgentSession != "as-repo" {
				t.Fatalf("questions %+v, want one with the repositories as options", els)
			}
		})
	}
}
