// Package netguard refuses connections, made on behalf of users or
// models (webhook deliveries, the sandbox's egress proxy), to addresses
// inside the gateway's network: loopback, private, link-local and other
// special ranges. The check runs at dial time, after name resolution.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrRefusedAddress: a connection would reach an address the gateway may
// not reach on a user's behalf (loopback, private, link-local…).
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

// DialControl, a net.Dialer Control, checks the address a connection is about to be made to:
// after name resolution, so a hostname (or a DNS answer that changes
// between checks) cannot lead to an internal address.
func DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: %w", network, address, ErrRefusedAddress)
	}
	return CheckAddr(ap.Addr())
}
