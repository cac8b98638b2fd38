package webtools

import (
	"net/url"
	"strings"
	"testing"
)

func TestReadable(t *testing.T) {
	base, _ := url.Parse("https://example.org/docs/guide/")
	doc := `<!doctype html><html><head><title> Deploying  the gateway </title>
<style>body{color:red}</style><script>var secret = "not text";</script></head>
<body><nav><a href="/">Home</a> | <a href="../api/">API</a></nav>
<main><h1>Deploying</h1><p>Run   the <b>binary</b>
behind a proxy. See <a href="https://other.example/x?y=1#frag">the other page</a> for more.</p>
<h2>Steps</h2><ol><li>Build it</li><li>Start it<ul><li>with <code>serve</code></li></ul></li></ol>
<pre>switchboard serve
  --addr :8080</pre>
<table><tr><th>Variable</th><th>Default</th></tr><tr><td>ADDR</td><td>127.0.0.1:8080</td></tr></table>
<p>Line one<br>line two</p><a href="javascript:alert(1)">Click</a> <a href="#top">Top</a>
<a href="/logo"><img src="/l.png" alt="The logo"></a><noscript>enable JS</noscript></main></body></html>`
	title, text, err := readable(strings.NewReader(doc), base)
	if err != nil {
		t.Fatal(err)
	}
	if title != "Deploying the gateway" {
		t.Errorf("title %q", title)
	}
	for _, want := range []string{
		"[Home](https://example.org/) | [API](https://example.org/docs/api/)",
		"# Deploying\n\nRun the binary behind a proxy. See [the other page](https://other.example/x?y=1#frag) for more.",
		"## Steps",
		"1. Build it\n2. Start it\n  - with `serve`",
		"```\nswitchboard serve\n  --addr :8080\n```",
		"Variable | Default\nADDR | 127.0.0.1:8080",
		"Line one\nline two",
		"Click Top",
		"[The logo](https://example.org/logo)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, gone := range []string{"secret", "color:red", "enable JS", "Deploying the gateway"} {
		if strings.Contains(text, gone) {
			t.Errorf("text holds %q:\n%s", gone, text)
		}
	}
}

func TestReadableBase(t *testing.T) {
	base, _ := url.Parse("https://example.org/a/")
	_, text, err := readable(strings.NewReader(`<html><head><base href="https://cdn.example/b/"></head><body><a href="c">C</a></body></html>`), base)
	if err != nil || text != "[C](https://cdn.example/b/c)" {
		t.Fatalf("%q %v", text, err)
	}
}

func TestRobots(t *testing.T) {
	const file = `# comment
User-agent: *
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$

User-agent: otherbot
Disallow: /

Sitemap: https://example.org/sitemap.xml
`
	const own = `User-agent: *
Disallow: /

User-agent: Switchboard
User-agent: friend
Disallow: /secret
`
	for _, tc := range []struct {
		file, path string
		want       bool
	}{
		{file, "/", true},
		{file, "/private/x", false},
		{file, "/private/open/page", true},
		{file, "/doc.pdf", false},
		{file, "/doc.pdf?x=1", true},
		{file, "/robots.txt", true},
		{own, "/public", true},
		{own, "/secret/a", false},
		{"", "/anything", true},
		{"User-agent: *\nDisallow:\n", "/x", true},
		{"User-agent: *\nDisallow: /\nAllow: /$\n", "/", true},
		{"User-agent: *\nDisallow: /\nAllow: /$\n", "/a", false},
		{"User-agent: *\nDisallow: /a*b\n", "/axxb/c", false},
		{"User-agent: *\nDisallow: /a*b\n", "/axx", true},
	} {
		u, _ := url.Parse("https://example.org" + tc.path)
		if got := parseRobots([]byte(tc.file)).allowed(u); got != tc.want {
			t.Errorf("%q for %s: allowed %v, want %v", tc.file, tc.path, got, tc.want)
		}
	}
	u, _ := url.Parse("https://example.org/")
	if (&robots{all: true}).allowed(u) {
		t.Error("a robots.txt that answered 5xx allows")
	}
}
