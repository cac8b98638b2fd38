package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrRefusedAddress: a destination resolved to an address webhooks may not
// reach (loopback, private, link-local…) and private ones are not allowed.
var ErrRefusedAddress = errors.New("refused address")

// refused lists the ranges netip's predicates do not name.
var refused = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
}

// CheckAddr reports why ip must not be reached, or nil. IPv4-mapped IPv6
// addresses are judged as the IPv4 address they carry.
func CheckAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	what := ""
	switch {
	case !ip.IsValid():
		what = "not an address"
	case ip.IsUnspecified():
		what = "unspecified"
	case ip.IsLoopback():
		what = "a loopback address"
	case ip.IsPrivate():
		what = "a private address"
	case ip.IsLinkLocalUnicast():
		what = "a link-local address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		what = "a multicast address"
	}
	for _, r := range refused {
		if what == "" && r.prefix.Contains(ip) {
			what = r.what
		}
	}
	if what != "" {
		return fmt.Errorf("%s is %s: %w", ip, what, ErrRefusedAddress)
	}
	return nil
}

// dialControl checks the address a connection is about to be made to:
// after name resolution, so a hostname (or a DNS answer that changes
// between checks) cannot lead to an internal address.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: %w", network, address, ErrRefusedAddress)
	}
	return CheckAddr(ap.Addr())
}

// ClientOptions tune NewClient.
type ClientOptions struct {
	// AllowPrivate lets deliveries reach loopback, private and link-local
	// addresses (an operator's choice; the tests use it).
	AllowPrivate bool
	// Timeout bounds one attempt, from dial to the end of the answer
	// (default 10 s).
	Timeout time.Duration
	// MaxConnsPerHost bounds open connections to one receiver (default 16).
	MaxConnsPerHost int
}

// NewClient returns the HTTP client deliveries use: the SSRF guard on
// every dial, no proxy (a proxy would be the address checked), no
// redirects, and a timeout.
func NewClient(o ClientOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 16
	}
	d := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		d.Control = dialControl
	}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          4 * o.MaxConnsPerHost,
			MaxIdleConnsPerHost:   o.MaxConnsPerHost,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   o.Timeout,
			ResponseHeaderTimeout: o.Timeout,
		},
		// A redirect answer is the answer: following it would let a
		// receiver point deliveries anywhere, past the create-time checks.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
