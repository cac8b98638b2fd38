package webhooks

import (
	"net"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core/netguard"
)

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
		d.Control = netguard.DialControl
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
