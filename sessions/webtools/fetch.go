package webtools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// Bounds of one fetch.
const (
	// maxRedirects a fetch follows, each checked like the first URL.
	maxRedirects = 5
	// maxOutput bounds the text returned to the model.
	maxOutput = 100 << 10
)

// answer is one HTTP response, no redirect followed.
type answer struct {
	Status      int
	ContentType string
	// Location is the Location header of a redirect, as sent.
	Location string
	Body     []byte
	// Cut says the body went on past the limit asked for.
	Cut bool
}

// transport makes one GET, following no redirect.
type transport interface {
	get(ctx context.Context, u *url.URL, max int64) (*answer, error)
}

// preparer is a transport with work to do before a fetch's clock
// starts: a sandbox to start, whose first start may build its image.
type preparer interface {
	prepare(ctx context.Context) error
}

// refusal is a fetch refused by a rule (an address, an allowlist,
// robots.txt): the model is told why.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refused(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// fetcher is web_fetch's work: the URL, its redirects and their
// robots.txt through one transport, the answer made text.
type fetcher struct {
	tr       transport
	maxBytes int64
	timeout  time.Duration
	robots   bool
}

// page is what a fetch returns to the model.
type page struct {
	URL         string
	Status      int
	ContentType string
	Title       string
	Text        string
	Cut         bool // the download stopped at maxBytes
}

// fetch gets raw, following redirects, each one allowed by robots.txt
// when the fetcher honours it.
func (f *fetcher) fetch(ctx context.Context, raw string) (*page, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, err
	}
	if p, ok := f.tr.(preparer); ok {
		if err := p.prepare(ctx); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	robots := map[string]*robots{}
	for hops := 0; ; hops++ {
		if f.robots {
			if err := f.allowedByRobots(ctx, u, robots); err != nil {
				return nil, f.timedOut(ctx, err)
			}
		}
		a, err := f.tr.get(ctx, u, f.maxBytes)
		if err != nil {
			return nil, f.timedOut(ctx, err)
		}
		if a.Status >= 300 && a.Status < 400 && a.Status != 304 && a.Location != "" {
			if hops == maxRedirects {
				return nil, fmt.Errorf("%s redirects again after %d redirects: stopped", u, maxRedirects)
			}
			next, err := u.Parse(a.Location)
			if err != nil {
				return nil, fmt.Errorf("%s redirects to %q, not a URL: %w", u, a.Location, err)
			}
			checked, err := checkURL(next.String())
			if err != nil {
				return nil, fmt.Errorf("%s redirects to %s: %w", u, next, err)
			}
			u = checked
			continue
		}
		return f.page(u, a)
	}
}

// timedOut says so when the fetch's own deadline cut err short.
func (f *fetcher) timedOut(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s", f.timeout)
	}
	return err
}

// checkURL accepts an absolute http(s) URL without credentials.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, refused("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, refused("%q: only http and https URLs are fetched", raw)
	}
	if u.Host == "" {
		return nil, refused("%q has no host", raw)
	}
	if u.User != nil {
		return nil, refused("%q: URLs with a user name or password are refused", raw)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// allowedByRobots fetches the robots.txt of u's origin once per fetch
// and checks u against it.
func (f *fetcher) allowedByRobots(ctx context.Context, u *url.URL, cache map[string]*robots) error {
	origin := u.Scheme + "://" + u.Host
	r, ok := cache[origin]
	if !ok {
		var err error
		if r, err = f.getRobots(ctx, u); err != nil {
			return err
		}
		cache[origin] = r
	}
	if !r.allowed(u) {
		if r.all {
			return refused("refused by robots.txt: %s/robots.txt could not be read (a server error), which keeps every path out", origin)
		}
		return refused("refused by robots.txt: %s/robots.txt disallows %s for %s", origin, u.EscapedPath(), userAgent)
	}
	return nil
}

// getRobots reads an origin's robots.txt as RFC 9309 has it: following
// redirects; a 4xx (none) allows everything, a 5xx disallows
// everything.
func (f *fetcher) getRobots(ctx context.Context, page *url.URL) (*robots, error) {
	u := &url.URL{Scheme: page.Scheme, Host: page.Host, Path: "/robots.txt"}
	for hops := 0; hops <= maxRedirects; hops++ {
		a, err := f.tr.get(ctx, u, maxRobotsBytes)
		if err != nil {
			return nil, err
		}
		switch {
		case a.Status >= 300 && a.Status < 400 && a.Location != "":
			next, err := u.Parse(a.Location)
			if err != nil {
				return &robots{}, nil
			}
			if u, err = checkURL(next.String()); err != nil {
				return &robots{}, nil
			}
		case a.Status >= 200 && a.Status < 300:
			return parseRobots(a.Body), nil
		case a.Status >= 500:
			return &robots{all: true}, nil
		default:
			return &robots{}, nil
		}
	}
	return &robots{}, nil
}

// page makes an answer text: HTML reduced, other text as it is, other
// media refused.
func (f *fetcher) page(u *url.URL, a *answer) (*page, error) {
	p := &page{URL: u.String(), Status: a.Status, ContentType: a.ContentType, Cut: a.Cut}
	media, _, _ := mime.ParseMediaType(a.ContentType)
	if media == "" {
		media = sniff(a.Body)
	}
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		r, err := charset.NewReader(bytes.NewReader(a.Body), a.ContentType)
		if err != nil {
			r = bytes.NewReader(a.Body)
		}
		title, text, err := readable(r, u)
		if err != nil {
			return nil, fmt.Errorf("read the HTML of %s: %w", u, err)
		}
		p.Title, p.Text = title, text
	case isText(media):
		r, err := charset.NewReader(bytes.NewReader(a.Body), a.ContentType)
		if err != nil {
			r = bytes.NewReader(a.Body)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("read the text of %s: %w", u, err)
		}
		p.Text = strings.ToValidUTF8(string(b), "\uFFFD")
	default:
		return nil, fmt.Errorf("%s is %s (%d bytes): web_fetch returns text and HTML pages only", u, orUnknown(media), len(a.Body))
	}
	return p, nil
}

// isText reports whether a media type is text a model can read as is.
func isText(media string) bool {
	if strings.HasPrefix(media, "text/") {
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript", "application/ld+json", "application/rss+xml", "application/atom+xml", "application/x-yaml", "application/yaml", "application/toml":
		return true
	}
	return strings.HasSuffix(media, "+json") || strings.HasSuffix(media, "+xml")
}

// sniff guesses the type of a body sent without one.
func sniff(b []byte) string {
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	switch {
	case strings.HasPrefix(head, "<!doctype html"), strings.HasPrefix(head, "<html"):
		return "text/html"
	case utf8.Valid(b[:min(len(b), 4096)]) && !bytes.ContainsRune(b[:min(len(b), 4096)], 0):
		return "text/plain"
	}
	return ""
}

func orUnknown(media string) string {
	if media == "" {
		return "of an unknown type"
	}
	return media
}

// render is the tool's output: where the text came from, then the text,
// cut at maxOutput.
func (p *page) render(maxBytes int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %d\n", p.URL, p.Status)
	if p.ContentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", p.ContentType)
	}
	if p.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", p.Title)
	}
	if p.Cut {
		fmt.Fprintf(&b, "[the page is larger than %d bytes: only its beginning was read]\n", maxBytes)
	}
	b.WriteString("\n")
	text := p.Text
	if len(text) > maxOutput {
		cut := maxOutput
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[cut: the text is %d bytes; the first %d are shown]", len(p.Text), cut)
	}
	if text == "" {
		text = "[the page has no text]"
	}
	b.WriteString(text)
	return b.String()
}
