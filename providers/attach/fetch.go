// Package attach records and downloads the files and images on the
// messages that trigger the agent, for the providers. At intake a
// provider records where the platform keeps each file (Record: no
// download, so the webhook's answer waits for none); the first turn that
// reads the message downloads them (Fetch, through the provider's
// core.AttachmentFetcher): only from each platform's own file hosts,
// through the private-address guard, with the platform's token sent to
// those hosts only and never kept with the file, within a size and a
// time limit. It stores what it got (core.AttachmentStore) and says, for
// what it did not keep, why: the model is told.
package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/netguard"
)

// Remote is a file a platform holds for a message, as its event says.
type Remote struct {
	URL string
	// ID is the platform's id of the file, when it has one.
	ID string
	// Name, MediaType and Size are what the platform says of it (empty or
	// 0 when it says nothing): the name is then the URL's last segment,
	// the type what the download answers.
	Name      string
	MediaType string
	Size      int64
	// Skipped, when set, keeps the file out for this reason, which the
	// platform's side knows (the app may not read files).
	Skipped string
}

// Access is how a platform serves the files of one of its tenants.
type Access struct {
	// Hosts are where a file may be downloaded from, redirects included:
	// host or host:port.
	Hosts []string
	// Header goes with requests to AuthHosts only: the platform's token.
	Header    http.Header
	AuthHosts []string
	// Skipped, when set, keeps every file out for this reason (the
	// platform's token cannot be had).
	Skipped string
}

// Fetcher downloads and stores attachments.
type Fetcher struct {
	cfg   Config
	store core.AttachmentStore
	tr    http.RoundTripper
	log   *slog.Logger
}

// New returns a Fetcher that stores into store.
func New(cfg Config, store core.AttachmentStore, log *slog.Logger) *Fetcher {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The message's deadline (Fetch) bounds every step; the transport
	// has no timeouts of its own to race it.
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		d.Control = netguard.DialControl
	}
	tr := &http.Transport{
		Proxy:               nil, // a proxy would be the address the guard checks
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Fetcher{cfg: cfg, store: store, tr: tr, log: log}
}

// MaxBytes is the largest file kept.
func (f *Fetcher) MaxBytes() int64 { return f.cfg.MaxBytes }

// Record is what a message stores of its files at intake, downloading
// nothing: each an attachment pending download from its source (a copy
// of source with the file's id and URL), or skipped for a reason known
// without downloading (past the first MaxFiles, over the size limit the
// platform says, the platform's own reason).
//
// A nil Fetcher (a gateway that downloads no attachments) records none.
func (f *Fetcher) Record(source core.AttachmentSource, files []Remote) []core.Attachment {
	if f == nil || len(files) == 0 {
		return nil
	}
	out := make([]core.Attachment, 0, len(files))
	for i, r := range files {
		src := source
		src.FileID, src.URL = r.ID, r.URL
		a := core.Attachment{Name: r.Name, MediaType: r.MediaType, Size: r.Size, Source: &src}
		if a.Name == "" {
			if u, err := url.Parse(r.URL); err == nil {
				a.Name = path.Base(u.Path)
			}
		}
		switch {
		case i >= MaxFiles:
			a.Skipped = fmt.Sprintf("only the first %d files of a message are read", MaxFiles)
		case r.Skipped != "":
			a.Skipped = r.Skipped
		case r.Size > f.cfg.MaxBytes:
			a.Skipped = f.overLimit(r.Size)
		}
		a.Kind = core.AttachmentKind(a.MediaType, a.Name)
		out = append(out, a)
	}
	return out
}

// Fetch downloads the pending attachments of a message (Record), within
// the time limit for all of them, with access, and stores each it got.
// It returns atts in order: a pending one stored (with its id) or skipped
// with why, the others as they were. An error (the store failed, ctx
// ended) means none of them should be taken as fetched. A nil Fetcher
// (a gateway that downloads no attachments) skips them.
func (f *Fetcher) Fetch(ctx context.Context, atts []core.Attachment, access Access) ([]core.Attachment, error) {
	if f == nil {
		return Skip(atts, "this gateway downloads no attachments"), nil
	}
	dctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	out := make([]core.Attachment, 0, len(atts))
	for _, a := range atts {
		if !a.Pending() {
			out = append(out, a)
			continue
		}
		var data []byte
		if a.Skipped = access.Skipped; a.Skipped == "" {
			got, mediaType, err := f.get(dctx, a, access)
			data = got
			if mediaType != "" {
				a.MediaType = mediaType
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err() // the turn ended, not the download
				}
				a.Skipped = f.why(dctx, err)
				f.log.Info("attachment skipped", "name", a.Name, "why", a.Skipped, "err", err)
			}
		}
		a.Kind = core.AttachmentKind(a.MediaType, a.Name)
		if a.Skipped == "" {
			stored, err := f.store.PutAttachment(ctx, a, data)
			if err != nil {
				return nil, err
			}
			a = stored
		}
		out = append(out, a)
	}
	return out, nil
}

// Skip returns atts with each pending one skipped for why.
func Skip(atts []core.Attachment, why string) []core.Attachment {
	out := slices.Clone(atts)
	for i := range out {
		if out[i].Pending() {
			out[i].Skipped = why
		}
	}
	return out
}

var (
	errTooLarge = errors.New("too large")
	errHost     = errors.New("not a file host of the platform")
	errSignIn   = errors.New("a web page instead of the file")
)

// statusError is a download the platform refused.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("the platform answered %d", int(e)) }

func (f *Fetcher) overLimit(n int64) string {
	if n <= 0 {
		return "over the " + core.FormatBytes(f.cfg.MaxBytes) + " limit"
	}
	return fmt.Sprintf("%s, over the %s limit", core.FormatBytes(n), core.FormatBytes(f.cfg.MaxBytes))
}

// why says in words why a download failed.
func (f *Fetcher) why(ctx context.Context, err error) string {
	var st statusError
	switch {
	case errors.Is(err, errTooLarge):
		return f.overLimit(0)
	case errors.Is(err, errHost):
		return "its address is not one of the platform's file hosts"
	case errors.Is(err, errSignIn):
		return "the platform answered with a web page instead of the file: the app may lack the permission to read files"
	case errors.As(err, &st):
		return st.Error()
	case errors.Is(err, netguard.ErrRefusedAddress):
		return "its host is on a private network the gateway may not reach"
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the files of the message took longer than %s to download", f.cfg.Timeout)
	}
	return "it could not be downloaded"
}

// get downloads one file and says its media type.
func (f *Fetcher) get(ctx context.Context, a core.Attachment, r Access) ([]byte, string, error) {
	u, err := url.Parse(a.Source.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !hostIn(u, r.Hosts) {
		return nil, "", errHost
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Source.URL, nil)
	if err != nil {
		return nil, "", errHost
	}
	if hostIn(u, r.AuthHosts) {
		for k, vs := range r.Header {
			req.Header[k] = slices.Clone(vs)
		}
	}
	client := &http.Client{Transport: f.tr, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if !hostIn(next.URL, r.Hosts) {
			return errHost
		}
		if !hostIn(next.URL, r.AuthHosts) {
			// The token stays with the platform: a storage host it
			// redirects to gets a signed address, not the token.
			for k := range r.Header {
				next.Header.Del(k)
			}
		}
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", statusError(resp.StatusCode)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		return nil, "", errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > f.cfg.MaxBytes {
		return nil, "", errTooLarge
	}
	served, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	said := baseType(a.MediaType)
	if served == "text/html" && said != "" && said != "text/html" {
		return nil, "", errSignIn
	}
	switch {
	case said != "" && said != "application/octet-stream":
		return data, said, nil
	case served != "" && served != "application/octet-stream":
		return data, served, nil
	}
	return data, baseType(http.DetectContentType(data)), nil
}

// baseType is a media type without its parameters, lower case.
func baseType(mt string) string {
	base, _, _ := strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

// hostIn reports whether u's host is one of hosts (host, or host:port).
func hostIn(u *url.URL, hosts []string) bool {
	for _, h := range hosts {
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname()) {
			return true
		}
	}
	return false
}
