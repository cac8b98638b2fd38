package attach

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// memStore keeps attachments in memory; fail makes every put fail.
type memStore struct {
	mu   sync.Mutex
	data map[string][]byte
	n    int
	fail bool
}

func (s *memStore) PutAttachment(_ context.Context, a core.Attachment, data []byte) (core.Attachment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return a, errors.New("disk full")
	}
	s.n++
	a.ID, a.Size = "att_"+strings.Repeat("x", s.n), int64(len(data))
	if s.data == nil {
		s.data = map[string][]byte{}
	}
	s.data[a.ID] = data
	return a, nil
}

func (s *memStore) GetAttachment(_ context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data[id]
	if !ok {
		return nil, core.ErrNotFound
	}
	return d, nil
}

// platform serves files as a platform does: /files/* with the token,
// /signin as a sign-in page, /moved/* redirecting to the storage host.
type platform struct {
	srv, storage *httptest.Server
	mu           sync.Mutex
	auth         map[string]string // path → Authorization received
	hits         int
}

const token = "Bearer xoxb-secret"

var png = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)

func newPlatform(t *testing.T) *platform {
	p := &platform{auth: map[string]string{}}
	record := func(r *http.Request) {
		p.mu.Lock()
		p.auth[r.URL.Path] = r.Header.Get("Authorization")
		p.hits++
		p.mu.Unlock()
	}
	p.storage = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	t.Cleanup(p.storage.Close)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch {
		case r.URL.Path == "/signin":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html>sign in</html>"))
		case r.URL.Path == "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
		case r.URL.Path == "/big":
			_, _ = w.Write(bytes.Repeat([]byte("a"), 2048))
		case r.URL.Path == "/slow":
			<-r.Context().Done() // never answers: only the time limit ends it
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, p.storage.URL+"/blob/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/away/"):
			http.Redirect(w, r, "http://elsewhere.example/x", http.StatusFound)
		case r.URL.Path == "/notes":
			_, _ = w.Write([]byte("line one\nline two\n"))
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(png)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) remote(path string) Remote { return Remote{URL: p.srv.URL + path} }

// access is how the platform serves its files: from its host and the
// storage host, the token to its own host only.
func (p *platform) access() Access {
	return Access{Hosts: []string{host(p.srv.URL), host(p.storage.URL)},
		Header: http.Header{"Authorization": {token}}, AuthHosts: []string{host(p.srv.URL)}}
}

func (p *platform) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits
}

// source is where the test's files come from.
var source = core.AttachmentSource{Provider: "chat", Tenant: "T1"}

// fetch records files and fetches them.
func fetch(ctx context.Context, f *Fetcher, p *platform, files ...Remote) ([]core.Attachment, error) {
	return f.Fetch(ctx, f.Record(source, files), p.access())
}

func host(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// TestFetch: recording a message's files downloads nothing; fetching
// them keeps or skips each with a reason the model can read, the token
// goes to the platform's host only, nothing past the size limit is read,
// and what was fetched is not fetched again.
func TestFetch(t *testing.T) {
	p := newPlatform(t)
	store := &memStore{}
	f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, store, nil)
	named := func(r Remote, name, mt string, size int64) Remote {
		r.Name, r.MediaType, r.Size = name, mt, size
		return r
	}
	outside := Remote{URL: "http://elsewhere.example/files/x.png"}
	files := []Remote{
		named(p.remote("/files/shot.png"), "shot.png", "image/png", int64(len(png))),
		named(p.remote("/moved/shot2.png"), "shot2.png", "", 0),
		named(p.remote("/files/big.zip"), "big.zip", "application/zip", 5000),
		named(p.remote("/big"), "big.log", "", 0),
		named(p.remote("/signin"), "doc.pdf", "application/pdf", 10),
		named(p.remote("/forbidden"), "secret.txt", "text/plain", 10),
		named(p.remote("/away/x"), "x.png", "image/png", 10),
		named(outside, "x.png", "image/png", 10),
		named(p.remote("/notes"), "", "", 0),
		{Name: "scope.png", Skipped: "the app may not read files"},
	}
	files[0].ID = "F01"
	recorded := f.Record(source, files)
	if n := p.requests(); n != 0 {
		t.Fatalf("recording the files made %d requests", n)
	}
	for i, a := range recorded {
		pending := i != 2 && i != len(files)-1 // over the limit the platform says; the platform's reason
		if a.Pending() != pending || a.Source == nil || a.Source.URL != files[i].URL || a.Source.Tenant != "T1" {
			t.Errorf("recorded file %d: %+v (source %+v), want pending %v", i, a, a.Source, pending)
		}
	}
	if recorded[0].Source.FileID != "F01" {
		t.Errorf("the platform's file id: %+v", recorded[0].Source)
	}
	got, err := f.Fetch(t.Context(), recorded, p.access())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, kind, mediaType, skipped string
		stored                         bool
	}{
		{"shot.png", core.AttachmentImage, "image/png", "", true},
		{"shot2.png", core.AttachmentImage, "image/png", "", true},
		{"big.zip", core.AttachmentFile, "application/zip", "4.9 KiB, over the 1.0 KiB limit", false},
		{"big.log", core.AttachmentText, "", "over the 1.0 KiB limit", false},
		{"doc.pdf", core.AttachmentFile, "application/pdf", "a web page instead of the file", false},
		{"secret.txt", core.AttachmentText, "text/plain", "the platform answered 403", false},
		{"x.png", core.AttachmentImage, "image/png", "not one of the platform's file hosts", false},
		{"x.png", core.AttachmentImage, "image/png", "not one of the platform's file hosts", false},
		{"notes", core.AttachmentText, "text/plain", "", true},
		{"scope.png", core.AttachmentImage, "", "the app may not read files", false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d attachments, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		a := got[i]
		if a.Name != w.name || a.Kind != w.kind || (w.mediaType != "" && !strings.HasPrefix(a.MediaType, w.mediaType)) ||
			!strings.Contains(a.Skipped, w.skipped) || (a.ID != "") != w.stored || (w.skipped == "") != (a.Skipped == "") {
			t.Errorf("file %d: %+v, want %+v", i, a, w)
		}
	}
	if data, _ := store.GetAttachment(t.Context(), got[0].ID); !bytes.Equal(data, png) || got[0].Size != int64(len(png)) {
		t.Errorf("stored %d bytes (size %d), want the image", len(data), got[0].Size)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.auth["/files/shot.png"] != token || p.auth["/moved/shot2.png"] != token {
		t.Errorf("the platform got %q: want the token", p.auth)
	}
	if a := p.auth["/blob/shot2.png"]; a != "" {
		t.Errorf("the storage host a redirect went to got the token %q", a)
	}
	if _, asked := p.auth["/files/big.zip"]; asked {
		t.Error("a file declared over the limit was downloaded")
	}
	hits := p.hits
	p.mu.Unlock()
	again, err := f.Fetch(t.Context(), got, p.access())
	p.mu.Lock()
	if err != nil || p.hits != hits || len(again) != len(got) || again[0].ID != got[0].ID {
		t.Errorf("fetching the fetched again: %d requests more, %v", p.hits-hits, err)
	}
}

// TestFetchLimits: the time limit ends a download that does not come,
// with a note; a turn that ends meanwhile fails the fetch instead; a
// private address is refused unless allowed; only the first MaxFiles are
// read; a store that fails fails the fetch; so does a platform without a
// token, with a note.
func TestFetchLimits(t *testing.T) {
	p := newPlatform(t)
	t.Run("time limit", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: 50 * time.Millisecond, AllowPrivate: true}, &memStore{}, nil)
		got, err := fetch(t.Context(), f, p, p.remote("/slow"))
		if err != nil || len(got) != 1 || !strings.Contains(got[0].Skipped, "took longer than 50ms") {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("the turn ends", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, &memStore{}, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if got, err := fetch(ctx, f, p, p.remote("/slow")); err == nil {
			t.Fatalf("%+v: an ended turn is no error", got)
		}
	})
	t.Run("private address", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute}, &memStore{}, nil)
		got, err := fetch(t.Context(), f, p, p.remote("/files/a.png"))
		if err != nil || len(got) != 1 || !strings.Contains(got[0].Skipped, "private network") {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("at most MaxFiles", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, &memStore{}, nil)
		var files []Remote
		for range MaxFiles + 2 {
			files = append(files, p.remote("/files/a.png"))
		}
		got, err := fetch(t.Context(), f, p, files...)
		if err != nil || len(got) != MaxFiles+2 || got[MaxFiles-1].ID == "" || !strings.Contains(got[MaxFiles].Skipped, "only the first 10 files") {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("the store fails", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, &memStore{fail: true}, nil)
		if _, err := fetch(t.Context(), f, p, p.remote("/files/a.png")); err == nil {
			t.Fatal("a failed store is no error")
		}
	})
	t.Run("no token", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, &memStore{}, nil)
		before := p.requests()
		access := p.access()
		access.Skipped = "the app is no longer installed"
		got, err := f.Fetch(t.Context(), f.Record(source, []Remote{p.remote("/files/a.png")}), access)
		if err != nil || len(got) != 1 || got[0].Skipped != access.Skipped || p.requests() != before {
			t.Fatalf("%+v, %v", got, err)
		}
	})
}
