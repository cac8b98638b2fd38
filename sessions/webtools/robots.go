package webtools

import (
	"bufio"
	"bytes"
	"net/url"
	"strings"
)

// userAgent is the product token robots.txt files name the fetcher by,
// and the start of its User-Agent header.
const userAgent = "switchboard"

// maxRobotsBytes is how much of a robots.txt is read (RFC 9309 asks
// for at least 500 KiB).
const maxRobotsBytes = 500 << 10

// robots is the rules of one robots.txt for userAgent (RFC 9309): the
// group that names the product token, else the * group.
type robots struct {
	rules []robotsRule
	// all disallows everything (the file could not be had for a reason
	// the RFC reads as "keep out": a server error).
	all bool
}

type robotsRule struct {
	allow   bool
	pattern string
}

// parseRobots reads a robots.txt.
func parseRobots(b []byte) *robots {
	type group struct {
		agents []string
		rules  []robotsRule
	}
	var groups []*group
	var cur *group
	lastWasAgent := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxRobotsBytes)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !lastWasAgent || cur == nil {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(val))
			lastWasAgent = true
		case "allow", "disallow":
			lastWasAgent = false
			if cur == nil {
				continue
			}
			// An empty Disallow allows everything: it matches nothing.
			if val == "" {
				continue
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: val})
		default:
			// Sitemap, Crawl-delay…: not rules, and they do not end a
			// group's user-agent lines.
		}
	}
	r := &robots{}
	var star []robotsRule
	found := false
	for _, g := range groups {
		for _, a := range g.agents {
			switch {
			case a == userAgent:
				r.rules = append(r.rules, g.rules...)
				found = true
			case a == "*":
				star = append(star, g.rules...)
			}
		}
	}
	if !found {
		r.rules = star
	}
	return r
}

// allowed reports whether u's path may be fetched: the longest matching
// rule decides, allow winning a tie; no match allows.
func (r *robots) allowed(u *url.URL) bool {
	if r == nil {
		return true
	}
	if r.all {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	if p == "/robots.txt" {
		return true
	}
	best, allow := -1, true
	for _, rule := range r.rules {
		if !robotsMatch(rule.pattern, p) {
			continue
		}
		if n := len(rule.pattern); n > best || (n == best && rule.allow) {
			best, allow = n, rule.allow
		}
	}
	return allow
}

// robotsMatch matches a path against a rule's pattern: a prefix, where *
// is any run of characters and a final $ anchors the end.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 && anchored {
			return strings.HasSuffix(rest, part)
		}
		j := strings.Index(rest, part)
		if j < 0 {
			return false
		}
		rest = rest[j+len(part):]
	}
	return !anchored || rest == ""
}
