package slack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToMrkdwn(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"heading", "## Plan for *Monday*", "*Plan for _Monday_*"},
		{"bold", "this is **important** and __so is this__", "this is *important* and *so is this*"},
		{"italic", "an *aside* here", "an _aside_ here"},
		{"strike", "~~old~~ new", "~old~ new"},
		{"link", "see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&c=2|the docs>"},
		{"image", "![chart](https://example.com/c.png)", "<https://example.com/c.png|chart>"},
		{"bullets", "- one\n* two\n  + three", "• one\n• two\n  • three"},
		{"numbered lists are kept", "1. one\n2. two", "1. one\n2. two"},
		{"escapes", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"slack references are kept", "ask <@U123> in <#C1|general>, or <!here>; see <https://x.io>", "ask <@U123> in <#C1|general>, or <!here>; see <https://x.io>"},
		{"code span untouched", "run `a **b** <c>`", "run `a **b** &lt;c&gt;`"},
		{"fence keeps its body and drops the language", "```go\nx := **y** < 2\n```", "```\nx := **y** &lt; 2\n```"},
		{"unclosed fence is closed", "```\ncode", "```\ncode\n```"},
		{"table is fenced", "| a | b |\n|---|---|\n| 1 | 2 |\nafter", "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\nafter"},
		{"rule", "above\n---\nbelow", "above\n──────────\nbelow"},
		{"quote", "> said **this**", "> said *this*"},
		{"bold heading", "# **Done**", "*Done*"},
		{"link text with a pipe", "[a|b](https://x.io)", "<https://x.io|a¦b>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := toMrkdwn(tc.in); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	para := strings.Repeat("word ", 100) // 500 characters
	long := strings.Repeat(para+"\n\n", 20)
	code := "```\n" + strings.Repeat("line of code\n", 400) + "```"
	tests := []struct {
		name  string
		in    string
		limit int
		check func(t *testing.T, chunks []string)
	}{
		{"short stays whole", "hello", 3000, func(t *testing.T, c []string) {
			if len(c) != 1 || c[0] != "hello" {
				t.Fatalf("%q", c)
			}
		}},
		{"paragraph boundaries", long, 3000, func(t *testing.T, c []string) {
			for _, chunk := range c {
				if n := strings.Count(chunk, "word"); n%100 != 0 {
					t.Fatalf("a chunk of %d words: cut inside a paragraph", n)
				}
			}
		}},
		{"code block reopened", code, 3000, func(t *testing.T, c []string) {
			if len(c) < 2 {
				t.Fatalf("%d chunks", len(c))
			}
			for _, chunk := range c {
				if strings.Count(chunk, "```")%2 != 0 || !strings.HasPrefix(chunk, "```") {
					t.Fatalf("unbalanced fence in %q…", chunk[:40])
				}
			}
		}},
		{"one huge line", strings.Repeat("x", 7000), 3000, func(t *testing.T, c []string) {
			if strings.Join(c, "") != strings.Repeat("x", 7000) {
				t.Fatal("text lost")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunks := split(tc.in, tc.limit)
			for _, c := range chunks {
				if n := utf8.RuneCountInString(c); n > tc.limit {
					t.Fatalf("chunk of %d characters", n)
				}
			}
			tc.check(t, chunks)
		})
	}
}

func TestReplies(t *testing.T) {
	text := strings.Repeat(strings.Repeat("word ", 500)+"\n\n", 40) // ~100,000 characters
	msgs := replies(text)
	if len(msgs) < 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	total := 0
	for _, m := range msgs {
		size := 0
		for _, s := range m {
			size += utf8.RuneCountInString(s)
			if utf8.RuneCountInString(s) > sectionLimit {
				t.Fatal("section over the limit")
			}
		}
		if size > messageLimit || len(m) > blocksLimit {
			t.Fatalf("message of %d characters in %d sections", size, len(m))
		}
		total += strings.Count(strings.Join(m, ""), "word")
	}
	if total != 500*40 {
		t.Fatalf("%d words of %d", total, 500*40)
	}
}

func TestAskOptions(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"Where should I deploy?\n- staging\n- production", []string{"staging", "production"}},
		{"Pick one:\n1. **fast**\n2. cheap\n3. good", []string{"fast", "cheap", "good"}},
		{"Should I merge it?", []string{"Yes", "No"}},
		{"What is the repository called?", nil},
		{"Options:\n- only one", nil},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			if got := askOptions(tc.q); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("%q", got)
			}
		})
	}
}
