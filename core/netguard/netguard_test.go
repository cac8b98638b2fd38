package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/switchboardhq/switchboard/core/netguard"
)

// entry is a range of an IANA special-purpose registry and whether an
// address in it is refused: unless the registry marks it globally
// reachable ("True"; "N/A" and terminated entries are refused).
type entry struct {
	prefix  string
	refused bool
	// probes, when given, are addresses to check instead of the range's
	// first and last.
	probes map[string]bool
}

// ipv4Registry is https://www.iana.org/assignments/iana-ipv4-special-registry/
// (25 entries; 192.0.0.170/32 and 192.0.0.171/32 share one).
var ipv4Registry = []entry{
	{prefix: "0.0.0.0/8", refused: true},
	{prefix: "0.0.0.0/32", refused: true},
	{prefix: "10.0.0.0/8", refused: true},
	{prefix: "100.64.0.0/10", refused: true},
	{prefix: "127.0.0.0/8", refused: true},
	{prefix: "169.254.0.0/16", refused: true},
	{prefix: "172.16.0.0/12", refused: true},
	{prefix: "192.0.0.0/24", refused: true},
	{prefix: "192.0.0.0/29", refused: true},
	{prefix: "192.0.0.8/32", refused: true},
	{prefix: "192.0.0.9/32", refused: false},
	{prefix: "192.0.0.10/32", refused: false},
	{prefix: "192.0.0.170/32", refused: true},
	{prefix: "192.0.0.171/32", refused: true},
	{prefix: "192.0.2.0/24", refused: true},
	{prefix: "192.31.196.0/24", refused: false},
	{prefix: "192.52.193.0/24", refused: false},
	{prefix: "192.88.99.0/24", refused: true}, // terminated
	{prefix: "192.88.99.2/32", refused: true},
	{prefix: "192.168.0.0/16", refused: true},
	{prefix: "192.175.48.0/24", refused: false},
	{prefix: "198.18.0.0/15", refused: true},
	{prefix: "198.51.100.0/24", refused: true},
	{prefix: "203.0.113.0/24", refused: true},
	{prefix: "240.0.0.0/4", refused: true},
	{prefix: "255.255.255.255/32", refused: true},
}

// ipv6Registry is https://www.iana.org/assignments/iana-ipv6-special-registry/
// (25 entries).
var ipv6Registry = []entry{
	{prefix: "::1/128", refused: true},
	{prefix: "::/128", refused: true},
	{prefix: "::ffff:0:0/96", refused: true},
	// Reachable, and judged by the IPv4 address it carries.
	{prefix: "64:ff9b::/96", probes: map[string]bool{"64:ff9b::8.8.8.8": false, "64:ff9b::127.0.0.1": true,
		"64:ff9b::192.168.0.1": true, "64:ff9b::a9fe:a9fe": true, "64:ff9b::192.0.0.9": false}},
	{prefix: "64:ff9b:1::/48", refused: true},
	{prefix: "100::/64", refused: true},
	{prefix: "100:0:0:1::/64", refused: true},
	{prefix: "2001::/23", refused: true},
	{prefix: "2001::/32", refused: true}, // Teredo: N/A
	{prefix: "2001:1::1/128", refused: false},
	{prefix: "2001:1::2/128", refused: false},
	{prefix: "2001:1::3/128", refused: false},
	{prefix: "2001:2::/48", refused: true},
	{prefix: "2001:3::/32", refused: false},
	{prefix: "2001:4:112::/48", refused: false},
	{prefix: "2001:10::/28", refused: true}, // terminated
	{prefix: "2001:20::/28", refused: false},
	{prefix: "2001:30::/28", refused: false},
	{prefix: "2001:db8::/32", refused: true},
	{prefix: "2002::/16", refused: true}, // 6to4: N/A
	{prefix: "2620:4f:8000::/48", refused: false},
	{prefix: "3fff::/20", refused: true},
	{prefix: "5f00::/16", refused: true},
	{prefix: "fc00::/7", refused: true},
	{prefix: "fe80::/10", refused: true},
}

// beyond are the ranges outside the two registries the guard refuses:
// multicast, and deprecated IPv6 ranges.
var beyond = []entry{
	{prefix: "224.0.0.0/4", refused: true},
	{prefix: "::/96", refused: true},
	{prefix: "fec0::/10", refused: true},
	{prefix: "ff00::/8", refused: true},
}

// TestRegistries: every range of both registries is in the guard's table
// with the verdict the registry gives it, and an address inside each
// range (its first and last, unless a more specific range holds them) is
// refused or allowed as the registry says.
func TestRegistries(t *testing.T) {
	all := append(append(append([]entry{}, ipv4Registry...), ipv6Registry...), beyond...)
	table := map[netip.Prefix]netguard.Range{}
	for _, r := range netguard.Ranges() {
		if r.Name == "" || r.Source == "" {
			t.Errorf("%s has no name or source", r.Prefix)
		}
		table[r.Prefix] = r
	}
	if len(table) != len(all) {
		t.Errorf("the guard's table has %d ranges, the registries and the extras %d", len(table), len(all))
	}
	prefixes := make([]netip.Prefix, len(all))
	for i, e := range all {
		prefixes[i] = netip.MustParsePrefix(e.prefix)
	}
	for i, e := range all {
		p := prefixes[i]
		t.Run(e.prefix, func(t *testing.T) {
			if r, ok := table[p]; !ok {
				t.Errorf("%s is not in the guard's table", p)
			} else if e.probes == nil && r.Refused != e.refused {
				t.Errorf("%s: refused %v in the table, want %v", p, r.Refused, e.refused)
			}
			probes := e.probes
			if probes == nil {
				probes = map[string]bool{}
				for _, a := range []netip.Addr{p.Addr(), lastOf(p)} {
					if !inMoreSpecific(a, p, prefixes) {
						probes[a.String()] = e.refused
					}
				}
			}
			if len(probes) == 0 {
				t.Fatalf("no address of %s outside its more specific ranges to probe", p)
			}
			for addr, refused := range probes {
				if err := netguard.CheckAddr(netip.MustParseAddr(addr)); (err != nil) != refused {
					t.Errorf("CheckAddr(%s) = %v, want refused %v", addr, err, refused)
				}
			}
		})
	}
}

// TestCheckAddr: the ranges the guard once let through are refused; public
// addresses are not, nor are those next to refused ranges.
func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
	}{
		{"::ffff:8.8.8.8", true}, {"::ffff:127.0.0.1", true}, {"fec0::1", true},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, {"100::1", true}, {"192.88.99.1", true},
		{"::127.0.0.1", true}, {"::8.8.8.8", true}, {"2002:808:808::1", true}, {"2002:7f00:1::", true},
		{"fe80::1%eth0", true}, {"169.254.169.254", true}, {"224.0.0.1", true}, {"ff02::1", true},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"2001:4860:4860::8888", false}, {"2606:4700::1111", false},
		{"172.32.0.1", false}, {"100.128.0.1", false}, {"192.0.1.1", false}, {"2001:200::1", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := netguard.CheckAddr(netip.MustParseAddr(tc.addr))
			if (err != nil) != tc.refused {
				t.Fatalf("CheckAddr(%s) = %v, want refused %v", tc.addr, err, tc.refused)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}

// lastOf is the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// inMoreSpecific reports whether a range more specific than p holds a.
func inMoreSpecific(a netip.Addr, p netip.Prefix, all []netip.Prefix) bool {
	for _, q := range all {
		if q.Bits() > p.Bits() && q.Contains(a) {
			return true
		}
	}
	return false
}
