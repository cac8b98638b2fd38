package gitlab

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/netguard"
)

// guardedTransport is the transport of the provider's default HTTP client:
// the instance's host (SWITCHBOARD_GITLAB_URL, which the operator chose)
// and the hosts named in SWITCHBOARD_GITLAB_ALLOWED_HOSTS are reached
// wherever they resolve, a self-managed instance on a private network
// included; any other host GitLab sends the gateway to (a redirect to
// object storage, an upload's address) must be on the public internet.
// Hosts are allowed by name, before resolution: never a general switch
// for private addresses.
func guardedTransport(instanceHost string, allowed []string) *http.Transport {
	if h, _, err := net.SplitHostPort(instanceHost); err == nil {
		instanceHost = h
	}
	names := map[string]bool{strings.ToLower(instanceHost): true}
	for _, h := range allowed {
		names[strings.ToLower(strings.TrimSpace(h))] = true
	}
	open := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	guarded := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: netguard.DialControl}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy would be the address the guard checks
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err == nil && names[strings.ToLower(host)] {
			return open.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
	return tr
}
