package web

import (
	"net/http"
	"time"
)

// IdleConnsPerHost is how many idle connections a client of APIClient
// keeps to one host. Go's default transport keeps two: a model endpoint or
// a platform's API that serves many turns at once over HTTP/1.1 (a
// self-hosted model server, a proxy) then has every request past the
// second dial anew and leave its connection closed behind it.
const IdleConnsPerHost = 64

// APIClient is a client of one API the gateway calls from many turns at
// once: the default transport's settings (proxy from the environment,
// HTTP/2 where the server offers it, its dial and TLS timeouts) with
// IdleConnsPerHost connections kept for reuse. A zero timeout sets none,
// for streams a context bounds.
func APIClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = IdleConnsPerHost
	return &http.Client{Transport: tr, Timeout: timeout}
}
