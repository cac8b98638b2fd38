// Package netguard refuses connections, made on behalf of users or
// models (webhook deliveries, the sandbox's egress proxy, attachment
// downloads, the web_fetch tool), to addresses that are not on the public internet:
// loopback, private, link-local and every other special-purpose range.
// Its ranges are the IANA special-purpose address registries (ranges.go),
// and a range is refused unless the registry says it is globally
// reachable. The check runs at dial time, after name resolution.
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

// CheckAddr reports why ip must not be reached, or nil. The most specific
// range of the table that holds ip decides; an address in no range is on
// the public internet. A NAT64 address (64:ff9b::/96, globally reachable)
// is judged by the IPv4 address it carries as well. IPv4 addresses are
// expected in their 4-byte form: an IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is refused, as the registry has it.
func CheckAddr(ip netip.Addr) error {
	if !ip.IsValid() {
		return fmt.Errorf("%s is not an address: %w", ip, ErrRefusedAddress)
	}
	// A prefix never holds a zoned address (fe80::1%eth0): the zone
	// names an interface, not another address.
	r, _ := rangeOf(ip.WithZone(""))
	if r.Refused {
		return fmt.Errorf("%s is %s: %w", ip, r.Name, ErrRefusedAddress)
	}
	if r.Prefix == nat64 {
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:16]))
		if inner, _ := rangeOf(v4); inner.Refused {
			return fmt.Errorf("%s carries %s, %s: %w", ip, v4, inner.Name, ErrRefusedAddress)
		}
	}
	return nil
}

// nat64 is the well-known NAT64 prefix: globally reachable, but it
// reaches the IPv4 address it carries.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// rangeOf returns the most specific range of the table holding ip.
func rangeOf(ip netip.Addr) (Range, bool) {
	var best Range
	found := false
	for _, r := range table {
		if r.Prefix.Contains(ip) && (!found || r.Prefix.Bits() > best.Prefix.Bits()) {
			best, found = r, true
		}
	}
	return best, found
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
