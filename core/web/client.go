package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the addresses whose X-Forwarded-For the gateway
// believes: the reverse proxies in front of it. A request from anywhere
// else is its connection's peer, whatever headers it sends.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads a comma-separated list of addresses and
// prefixes ("10.0.0.5, 192.168.0.0/16, ::1").
func ParseTrustedProxies(s string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a prefix", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func (t TrustedProxies) trust(s string) bool {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientOf is the address r came from: its connection's peer, or, when
// the peer is a trusted proxy, the last address of X-Forwarded-For that
// is not one (proxies append the address they heard from; what a client
// wrote before them is not believed).
func (t TrustedProxies) ClientOf(r *http.Request) string {
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	if !t.trust(peer) {
		return peer
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return peer // a hop that is no address: nothing before it is believed
		}
		if !t.trust(hop) {
			return hop
		}
	}
	return peer
}

type clientKey struct{}

// WithClient records the address a request came from (ClientOf), for
// Client.
func WithClient(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientKey{}, addr)
}

// Client is the address r came from, as the server recorded it; the
// connection's peer when it recorded none.
func Client(r *http.Request) string {
	if a, ok := r.Context().Value(clientKey{}).(string); ok && a != "" {
		return a
	}
	return TrustedProxies(nil).ClientOf(r)
}
