package netguard

import (
	"net/netip"
	"slices"
)

// Range is a special-purpose address range and whether the guard refuses
// it.
type Range struct {
	Prefix netip.Prefix
	// Name says what an address of the range is, as an error reads it.
	Name string
	// Source is where the range is defined: the IANA registry and the
	// RFC it names.
	Source string
	// Refused is true unless the registry marks the range globally
	// reachable. A range the registry marks N/A (Teredo, 6to4) or
	// terminated is refused.
	Refused bool
}

// Ranges returns the guard's table: every entry of the IANA IPv4 and IPv6
// special-purpose address registries, and the few ranges outside them
// that are not on the public internet either.
func Ranges() []Range { return slices.Clone(table) }

// The registries, as of their updates of 2025 (IPv4: 25 entries,
// 192.0.0.170/32 and 192.0.0.171/32 sharing one; IPv6: 25 entries):
// https://www.iana.org/assignments/iana-ipv4-special-registry/
// https://www.iana.org/assignments/iana-ipv6-special-registry/
const (
	v4reg = "IANA IPv4 special-purpose registry"
	v6reg = "IANA IPv6 special-purpose registry"
)

func r(prefix, name, source string, refused bool) Range {
	return Range{Prefix: netip.MustParsePrefix(prefix), Name: name, Source: source, Refused: refused}
}

// table is every range the guard knows. The most specific range holding
// an address decides (CheckAddr): 192.0.0.9/32 is reachable inside the
// refused 192.0.0.0/24.
var table = []Range{
	// IPv4 special-purpose registry.
	r("0.0.0.0/8", "a \"this network\" address", v4reg+", RFC 791 section 3.2", true),
	r("0.0.0.0/32", "unspecified", v4reg+", RFC 1122 section 3.2.1.3", true),
	r("10.0.0.0/8", "a private address", v4reg+", RFC 1918", true),
	r("100.64.0.0/10", "a carrier-grade NAT address", v4reg+", RFC 6598", true),
	r("127.0.0.0/8", "a loopback address", v4reg+", RFC 1122 section 3.2.1.3", true),
	r("169.254.0.0/16", "a link-local address", v4reg+", RFC 3927", true),
	r("172.16.0.0/12", "a private address", v4reg+", RFC 1918", true),
	r("192.0.0.0/24", "an IETF protocol address", v4reg+", RFC 6890 section 2.1", true),
	r("192.0.0.0/29", "an IPv4 service continuity address", v4reg+", RFC 7335", true),
	r("192.0.0.8/32", "the IPv4 dummy address", v4reg+", RFC 7600", true),
	r("192.0.0.9/32", "the Port Control Protocol anycast address", v4reg+", RFC 7723", false),
	r("192.0.0.10/32", "the TURN anycast address", v4reg+", RFC 8155", false),
	r("192.0.0.170/32", "a NAT64/DNS64 discovery address", v4reg+", RFC 8880, RFC 7050 section 2.2", true),
	r("192.0.0.171/32", "a NAT64/DNS64 discovery address", v4reg+", RFC 8880, RFC 7050 section 2.2", true),
	r("192.0.2.0/24", "a documentation address", v4reg+", RFC 5737", true),
	r("192.31.196.0/24", "an AS112 address", v4reg+", RFC 7535", false),
	r("192.52.193.0/24", "an AMT address", v4reg+", RFC 7450", false),
	r("192.88.99.0/24", "a 6to4 relay anycast address (deprecated)", v4reg+" (terminated 2015), RFC 7526", true),
	r("192.88.99.2/32", "the 6a44 relay anycast address", v4reg+", RFC 6751", true),
	r("192.168.0.0/16", "a private address", v4reg+", RFC 1918", true),
	r("192.175.48.0/24", "an AS112 direct delegation address", v4reg+", RFC 7534", false),
	r("198.18.0.0/15", "a benchmarking address", v4reg+", RFC 2544", true),
	r("198.51.100.0/24", "a documentation address", v4reg+", RFC 5737", true),
	r("203.0.113.0/24", "a documentation address", v4reg+", RFC 5737", true),
	r("240.0.0.0/4", "a reserved address", v4reg+", RFC 1112 section 4", true),
	r("255.255.255.255/32", "the limited broadcast address", v4reg+", RFC 8190, RFC 919 section 7", true),
	// IPv4 outside the registry.
	r("224.0.0.0/4", "a multicast address", "IANA IPv4 multicast address space, RFC 5771", true),

	// IPv6 special-purpose registry.
	r("::1/128", "a loopback address", v6reg+", RFC 4291", true),
	r("::/128", "unspecified", v6reg+", RFC 4291", true),
	r("::ffff:0:0/96", "an IPv4-mapped address", v6reg+", RFC 4291", true),
	// Reachable, and judged by the IPv4 address it carries (CheckAddr).
	r("64:ff9b::/96", "a NAT64 address", v6reg+", RFC 6052", false),
	r("64:ff9b:1::/48", "a local NAT64 address", v6reg+", RFC 8215", true),
	r("100::/64", "a discard-only address", v6reg+", RFC 6666", true),
	r("100:0:0:1::/64", "a dummy IPv6 address", v6reg+", RFC 9780", true),
	r("2001::/23", "an IETF protocol address", v6reg+", RFC 2928", true),
	// Globally reachable "N/A": a Teredo address carries the IPv4
	// addresses of its server and client, which the guard cannot judge.
	r("2001::/32", "a Teredo address", v6reg+", RFC 4380, RFC 8190", true),
	r("2001:1::1/128", "the Port Control Protocol anycast address", v6reg+", RFC 7723", false),
	r("2001:1::2/128", "the TURN anycast address", v6reg+", RFC 8155", false),
	r("2001:1::3/128", "the DNS-SD service registration anycast address", v6reg+", RFC 9665", false),
	r("2001:2::/48", "a benchmarking address", v6reg+", RFC 5180", true),
	r("2001:3::/32", "an AMT address", v6reg+", RFC 7450", false),
	r("2001:4:112::/48", "an AS112 address", v6reg+", RFC 7535", false),
	r("2001:10::/28", "an ORCHID address (deprecated)", v6reg+" (terminated 2014), RFC 4843", true),
	r("2001:20::/28", "an ORCHIDv2 address", v6reg+", RFC 7343", false),
	r("2001:30::/28", "a drone remote ID address", v6reg+", RFC 9374", false),
	r("2001:db8::/32", "a documentation address", v6reg+", RFC 3849", true),
	// Globally reachable "N/A": 6to4 relays are gone (RFC 7526), and the
	// address reaches the IPv4 address it carries.
	r("2002::/16", "a 6to4 address", v6reg+", RFC 3056", true),
	r("2620:4f:8000::/48", "an AS112 direct delegation address", v6reg+", RFC 7534", false),
	r("3fff::/20", "a documentation address", v6reg+", RFC 9637", true),
	r("5f00::/16", "a segment routing (SRv6) SID", v6reg+", RFC 9602", true),
	r("fc00::/7", "a private address", v6reg+", RFC 4193, RFC 8190", true),
	r("fe80::/10", "a link-local address", v6reg+", RFC 4291", true),
	// IPv6 outside the registry.
	r("::/96", "an IPv4-compatible address (deprecated)", "RFC 4291 section 2.5.5.1", true),
	r("fec0::/10", "a site-local address (deprecated)", "RFC 3879", true),
	r("ff00::/8", "a multicast address", "RFC 4291 section 2.7", true),
}
