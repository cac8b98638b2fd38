package vaults

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

const (
	maxSecret = 16 << 10
	maxHosts  = 100
	maxScopes = 100
)

// checkSecret validates a value that will be sent in a header. Its
// messages name the field and never quote the value.
func checkSecret(field, v string) error {
	switch {
	case v == "":
		return web.Invalid("field %q must not be empty", field)
	case len(v) > maxSecret:
		return web.Invalid("field %q is longer than %d bytes", field, maxSecret)
	case strings.TrimSpace(v) != v:
		return web.Invalid("field %q has leading or trailing white space", field)
	case !utf8.ValidString(v):
		return web.Invalid("field %q is not valid UTF-8", field)
	}
	for i := 0; i < len(v); i++ {
		// CR and LF would split the header it is sent in.
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return web.Invalid("field %q has a control character at byte %d", field, i)
		}
	}
	return nil
}

// checkHosts validates and canonicalises a credential's hosts, dropping
// repeats.
func checkHosts(hosts []string) ([]string, error) {
	if len(hosts) == 0 {
		return nil, web.Invalid("field \"hosts\" must name at least one host")
	}
	if len(hosts) > maxHosts {
		return nil, web.Invalid("field \"hosts\" has %d entries: at most %d", len(hosts), maxHosts)
	}
	out := make([]string, 0, len(hosts))
	for i, s := range hosts {
		p, err := core.ParseHostPattern(s, true)
		if err != nil {
			return nil, web.Invalid("field \"hosts\" entry %d (%q) %v", i, s, err)
		}
		if c := p.String(); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// checkHeaderName validates a header kind's header name and returns its
// canonical form.
func checkHeaderName(v string) (string, error) {
	if v == "" {
		return "", web.Invalid("field \"header_name\" must not be empty")
	}
	for i := 0; i < len(v); i++ {
		if !isTokenChar(v[i]) {
			return "", web.Invalid("field \"header_name\" %q is not a valid header name (byte %d)", v, i)
		}
	}
	name := http.CanonicalHeaderKey(v)
	switch name {
	// These frame the request itself; a credential in them would break it
	// or smuggle another.
	case "Host", "Content-Length", "Transfer-Encoding", "Connection":
		return "", web.Invalid("field \"header_name\" %q cannot carry a credential", name)
	}
	return name, nil
}

// isTokenChar reports whether c may appear in an HTTP field name (RFC 9110
// token).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// checkTokenURL validates an oauth token endpoint. Userinfo is refused
// because the URL is metadata, stored and shown in the clear.
func checkTokenURL(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return web.Invalid("field \"token_url\" is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return web.Invalid("field \"token_url\" must be an http or https URL")
	case u.Host == "":
		return web.Invalid("field \"token_url\" has no host")
	case u.User != nil:
		return web.Invalid("field \"token_url\" must not carry a user or password: give client_id and client_secret")
	case u.Fragment != "":
		return web.Invalid("field \"token_url\" must not have a fragment")
	}
	return nil
}

func checkScopes(scopes []string) error {
	if len(scopes) > maxScopes {
		return web.Invalid("field \"scopes\" has %d entries: at most %d", len(scopes), maxScopes)
	}
	for i, s := range scopes {
		// Scopes travel space-separated (RFC 6749 §3.3).
		if s == "" || len(s) > maxName || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' || r == '\\' }) {
			return web.Invalid("field \"scopes\" entry %d is not a scope token", i)
		}
	}
	return nil
}
