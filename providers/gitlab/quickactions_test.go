package gitlab

import "testing"

func TestNoQuickActions(t *testing.T) {
	const z = zeroWidthSpace
	for _, tc := range []struct{ name, in, want string }{
		{"plain text", "Looks good to me.", "Looks good to me."},
		{"a command line", "/merge", z + "/merge"},
		{"a command among lines", "Done.\n/label ~sb-agent\n/assign @me\nBye", "Done.\n" + z + "/label ~sb-agent\n" + z + "/assign @me\nBye"},
		{"indented", "  /approve", "  " + z + "/approve"},
		{"tab indented", "\t/close", "\t" + z + "/close"},
		{"a path mid-line", "see /etc/hosts and a/b", "see /etc/hosts and a/b"},
		{"not a letter", "/ 2\n//comment\n/1", "/ 2\n//comment\n/1"},
		{"in a fenced block", "```\n/merge\n```\n/merge", "```\n/merge\n```\n" + z + "/merge"},
		{"in a tilde fence", "~~~sh\n/usr/bin/true\n~~~", "~~~sh\n/usr/bin/true\n~~~"},
		{"a longer fence holds a shorter one", "````\n```\n/merge\n````\n/close", "````\n```\n/merge\n````\n" + z + "/close"},
		{"an unclosed fence runs to the end", "```\n/merge", "```\n/merge"},
		{"CRLF", "/close\r\nok", z + "/close\r\nok"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := noQuickActions(tc.in); got != tc.want {
				t.Errorf("noQuickActions(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
