package webtools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/netguard"
)

// accept is the Accept header of every fetch.
const accept = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"

// userAgentHeader is the User-Agent of every fetch.
const userAgentHeader = userAgent + " (web_fetch)"

// direct fetches from the gateway itself, for sessions without a
// sandbox: every dial is checked by netguard (unless private addresses
// are allowed), no proxy, no redirect followed.
type direct struct{ client *http.Client }

func newDirect(allowPrivate bool) *direct {
	if allowPrivate {
		return newDirectControl(nil)
	}
	return newDirectControl(netguard.DialControl)
}

// newDirectControl checks every dial with control.
func newDirectControl(control func(network, address string, c syscall.RawConn) error) *direct {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: control}
	return &direct{client: &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // a proxy would be the address the guard checks
			DialContext:         d.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		},
		// The fetcher follows redirects itself, checking each.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (d *direct) get(ctx context.Context, u *url.URL, max int64) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, refused("%s: %v", u, err)
	}
	req.Header.Set("User-Agent", userAgentHeader)
	req.Header.Set("Accept", accept)
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, netguard.ErrRefusedAddress) {
			return nil, refused("refused: %s is reached at an address the gateway may not fetch from (%s); web_fetch reaches public addresses only", u.Host, guardWords(err))
		}
		return nil, fmt.Errorf("fetch %s: %w", u, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	a := &answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Location: resp.Header.Get("Location"), Body: body}
	if int64(len(body)) > max {
		a.Body, a.Cut = body[:max], true
	}
	return a, nil
}

// guardWords keeps netguard's own words ("127.0.0.1 is Loopback").
func guardWords(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "+netguard.ErrRefusedAddress.Error()); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// unwrapURL drops the *url.Error's repetition of method and URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// sandboxed fetches from a session's sandbox, through its egress proxy:
// curl there sends the request to the proxy, which judges it like any
// other of the sandbox (the environment's allowlist, the private
// address guard), records its decision in the session's log, and
// reaches the site. The URL goes as the request's absolute target, so
// that the proxy itself connects, for https too, and answers a refusal
// with its reason; no credential is injected into such a request.
type sandboxed struct {
	sb      core.Sandbox
	session string

	mu    sync.Mutex
	ready bool
}

// prepare starts the sandbox, once per cycle, with the turn's time
// rather than the fetch's: a session's first command may wait for its
// environment's image to be prepared.
func (s *sandboxed) prepare(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	res, err := s.sb.Exec(ctx, s.session, core.ExecRequest{Cmd: []string{"true"}})
	if err != nil {
		return fmt.Errorf("start the sandbox to fetch from: %w", err)
	}
	if res.Killed != "" {
		return fmt.Errorf("start the sandbox to fetch from: %s", res.Killed)
	}
	s.ready = true
	return nil
}

// fetchScript runs in the sandbox: $1 the URL, $2 the most bytes kept,
// $3 seconds, $4 the User-Agent, $5 the Accept header. Headers go to
// stderr, then curl's exit status; the body to stdout.
const fetchScript = `proxy=${HTTP_PROXY:-$http_proxy}
if [ -z "$proxy" ]; then echo "switchboard-fetch-noproxy" >&2; exit 3; fi
if ! command -v curl >/dev/null 2>&1; then echo "switchboard-fetch-nocurl" >&2; exit 3; fi
{ curl -sS --noproxy '*' --max-time "$3" -A "$4" -H "Accept: $5" -D /dev/stderr --request-target "$1" "$proxy"; echo "switchboard-fetch-exit $?" >&2; } | head -c "$2"
`

func (s *sandboxed) get(ctx context.Context, u *url.URL, limit int64) (*answer, error) {
	secs := 30
	if dl, ok := ctx.Deadline(); ok {
		secs = max(1, int(time.Until(dl).Seconds()+0.999))
	}
	res, err := s.sb.Exec(ctx, s.session, core.ExecRequest{
		Cmd:   []string{fetchScript, u.String(), strconv.FormatInt(limit+1, 10), strconv.Itoa(secs), userAgentHeader, accept},
		Shell: true,
		// curl's own limit stops it first.
		Timeout:   time.Duration(secs+5) * time.Second,
		MaxOutput: int(limit) + 64<<10,
	})
	if err != nil {
		return nil, fmt.Errorf("fetch %s from the sandbox: %w", u, err)
	}
	return curlAnswer(u, res, limit)
}

// curlAnswer reads what fetchScript printed.
func curlAnswer(u *url.URL, res *core.ExecResult, max int64) (*answer, error) {
	stderr := string(res.Stderr)
	switch {
	case strings.Contains(stderr, "switchboard-fetch-noproxy"):
		return nil, refused("refused: this session's sandbox has no way out (the gateway runs it without the egress proxy)")
	case strings.Contains(stderr, "switchboard-fetch-nocurl"):
		return nil, fmt.Errorf("web_fetch needs curl in the sandbox's image, and this one has none")
	case res.Killed != "":
		return nil, fmt.Errorf("fetch %s from the sandbox: stopped: %s", u, res.Killed)
	}
	a := &answer{Body: res.Stdout}
	exit, curlErr := -1, ""
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimRight(line, "\r")
		lower := strings.ToLower(line)
		switch {
		case strings.HasPrefix(line, "HTTP/"):
			// A new block of headers: a 1xx before the answer.
			a.ContentType, a.Location = "", ""
			if f := strings.Fields(line); len(f) >= 2 {
				a.Status, _ = strconv.Atoi(f[1])
			}
		case strings.HasPrefix(lower, "content-type:"):
			a.ContentType = strings.TrimSpace(line[len("content-type:"):])
		case strings.HasPrefix(lower, "location:"):
			a.Location = strings.TrimSpace(line[len("location:"):])
		case strings.HasPrefix(line, "switchboard-fetch-exit "):
			exit, _ = strconv.Atoi(strings.TrimPrefix(line, "switchboard-fetch-exit "))
		case strings.HasPrefix(line, "curl: "):
			curlErr = strings.TrimPrefix(line, "curl: ")
		}
	}
	if int64(len(a.Body)) > max {
		a.Body, a.Cut = a.Body[:max], true
	}
	switch exit {
	case 0:
	case 23:
		// head stopped reading at the limit.
		if !a.Cut {
			return nil, fmt.Errorf("fetch %s from the sandbox: %s", u, curlErr)
		}
	case 28:
		return nil, context.DeadlineExceeded
	default:
		if curlErr == "" {
			curlErr = fmt.Sprintf("curl exited %d: %s", exit, strings.TrimSpace(stderr))
		}
		return nil, fmt.Errorf("fetch %s from the sandbox: %s", u, curlErr)
	}
	if strings.HasPrefix(string(a.Body), "switchboard egress: ") && (a.Status == http.StatusForbidden || a.Status == http.StatusBadGateway || a.Status == http.StatusBadRequest) {
		why := strings.TrimSpace(strings.TrimPrefix(string(a.Body), "switchboard egress: "))
		if a.Status == http.StatusForbidden {
			return nil, refused("refused by the sandbox's egress proxy: %s", why)
		}
		return nil, fmt.Errorf("fetch %s through the sandbox's egress proxy: %s", u, why)
	}
	return a, nil
}
