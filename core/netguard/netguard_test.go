package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/switchboardhq/switchboard/core/netguard"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fc00::1", true}, {"100.64.0.1", true}, {"0.0.0.0", true},
		{"::", true}, {"224.0.0.1", true}, {"ff02::1", true}, {"::ffff:127.0.0.1", true}, {"255.255.255.255", true},
		{"8.8.8.8", false}, {"2001:4860:4860::8888", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
		// (2002::/16) addresses are judged by the IPv4 address they carry.
		{"::127.0.0.1", true}, {"::10.0.0.1", true}, {"::169.254.169.254", true}, {"::8.8.8.8", false},
		{"64:ff9b::127.0.0.1", true}, {"64:ff9b::192.168.0.1", true}, {"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::8.8.8.8", false},
		{"2002:7f00:1::", true}, {"2002:a00:1::1", true}, {"2002:c0a8:101:1::1", true}, {"2002:a9fe:a9fe::", true},
		{"2002:808:808::1", false}, {"2002:808:808:1::1", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			ip, err := netip.ParseAddr(tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			if err := netguard.CheckAddr(ip); (err != nil) != tc.refused {
				t.Fatalf("netguard.CheckAddr(%s) = %v, refused want %v", tc.addr, err, tc.refused)
			}
		})
	}
}
