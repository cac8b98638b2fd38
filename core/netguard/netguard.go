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

// Prefixes of IPv6 addresses that carry an IPv4 address a relay or the
// host's stack may deliver to; what they carry is judged.
var (
	compatible = netip.MustParsePrefix("::/96")        // IPv4-compatible, deprecated but still routed by some stacks
	nat64      = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix
	sixToFour  = netip.MustParsePrefix("2002::/16")    // 6to4
)

// CheckAddr reports why ip must not be reached, or nil. IPv6 addresses
// that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4)
// are judged by the IPv4 address they carry as well.
func CheckAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	what := judge(ip)
	if v4, ok := embeddedIPv4(ip); ok && what == "" {
		if inner := judge(v4); inner != "" {
			what = "carrying " + v4.String() + ", " + inner
		}
	}
	if what != "" {
		return fmt.Errorf("%s is %s: %w", ip, what, ErrRefusedAddress)
	}
	return nil
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case compatible.Contains(ip), nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// judge says what kind of address ip is when it must not be reached, or "".
func judge(ip netip.Addr) string {
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
	return what
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
