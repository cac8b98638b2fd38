package vaults

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// hostPattern is one entry of a credential's hosts: where it may be sent.
type hostPattern struct {
	host     string // lower-case DNS name or canonical IP; the domain for a wildcard
	port     string // "" matches any port
	wildcard bool   // "*.domain": any name under domain, not domain itself
}

// parseHost parses a host, host:port, [ipv6]:port or (when wildcardOK)
// *.domain[:port], lower-casing names and dropping a trailing dot so that
// equal hosts compare equal.
func parseHost(s string, wildcardOK bool) (hostPattern, error) {
	var p hostPattern
	if s == "" {
		return p, errors.New("is empty")
	}
	if strings.ContainsAny(s, " \t\r\n/?#@") {
		return p, errors.New("is not a host: want host, host:port or *.domain")
	}
	host := strings.ToLower(s)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && (strings.HasPrefix(host, "[") || strings.Count(host, ":") == 1) {
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1] // [v6] without a port
		} else {
			h, port, err := net.SplitHostPort(host)
			if err != nil {
				return p, errors.New("is not a host: want host, host:port or *.domain")
			}
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
				return p, fmt.Errorf("has port %q: want 1 to 65535", port)
			}
			host, p.port = h, port
		}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		if !wildcardOK {
			return p, errors.New("is a wildcard, which only a credential's hosts may be")
		}
		rest = strings.TrimSuffix(rest, ".")
		// "*.com" would bind a credential to a whole top-level domain.
		if !validDNSName(rest) || !strings.Contains(rest, ".") {
			return p, errors.New("is not a wildcard of a domain: want *.example.com")
		}
		p.host, p.wildcard = rest, true
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" {
		p.host = a.Unmap().String()
		return p, nil
	}
	host = strings.TrimSuffix(host, ".")
	if !validDNSName(host) {
		return p, errors.New("is not a host name or IP address")
	}
	p.host = host
	return p, nil
}

// validDNSName checks lower-case LDH labels of 1–63 bytes, 253 in all.
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// String is the canonical form stored on the credential.
func (p hostPattern) String() string {
	h := p.host
	if p.wildcard {
		h = "*." + h
	}
	if strings.Contains(h, ":") { // IPv6
		h = "[" + h + "]"
	}
	if p.port != "" {
		return h + ":" + p.port
	}
	return h
}

// matches reports whether a request to target (never a wildcard) may carry
// the credential. A pattern without a port allows every port of its host.
func (p hostPattern) matches(target hostPattern) bool {
	if p.port != "" && p.port != target.port {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(target.host, "."+p.host)
	}
	return target.host == p.host
}

// hostAllowed reports whether host (host or host:port, as in a URL) is one
// of the patterns. Anything unparsable is refused.
func hostAllowed(patterns []string, host string) bool {
	target, err := parseHost(host, false)
	if err != nil {
		return false
	}
	for _, s := range patterns {
		p, err := parseHost(s, true)
		if err == nil && p.matches(target) {
			return true
		}
	}
	return false
}
