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

func (p *platform) remote(path string) Remote {
	return Remote{URL: p.srv.URL + path, Hosts: []string{host(p.srv.URL), host(p.storage.URL)},
		Header: http.Header{"Authorization": {token}}, AuthHosts: []string{host(p.srv.URL)}}
}

func host(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// TestFetch: each file is kept or skipped with a reason the model can
// read, the token goes to the platform's host only, and nothing past the
// size limit is read.
func TestFetch(t *testing.T) {
	p := newPlatform(t)
	store := &memStore{}
	f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, store, nil)
	named := func(r Remote, name, mt string, size int64) Remote {
		r.Name, r.MediaType, r.Size = name, mt, size
		return r
	}
	outside := p.remote("/files/x.png")
	outside.URL = "http://elsewhere.example/files/x.png"
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
	got, err := f.Fetch(t.Context(), files)
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
}

// TestFetchLimits: the time limit ends a download that does not come,
// with a note; a private address is refused unless allowed; only the
// first MaxFiles are read; a store that fails fails the fetch.
func TestFetchLimits(t *testing.T) {
	p := newPlatform(t)
	t.Run("time limit", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: 50 * time.Millisecond, AllowPrivate: true}, &memStore{}, nil)
		got, err := f.Fetch(t.Context(), []Remote{p.remote("/slow")})
		if err != nil || len(got) != 1 || !strings.Contains(got[0].Skipped, "took longer than 50ms") {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("private address", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute}, &memStore{}, nil)
		got, err := f.Fetch(t.Context(), []Remote{p.remote("/files/a.png")})
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
		got, err := f.Fetch(t.Context(), files)
		if err != nil || len(got) != MaxFiles+2 || got[MaxFiles-1].ID == "" || !strings.Contains(got[MaxFiles].Skipped, "only the first 10 files") {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("the store fails", func(t *testing.T) {
		f := New(Config{MaxBytes: 1024, Timeout: time.Minute, AllowPrivate: true}, &memStore{fail: true}, nil)
		if _, err := f.Fetch(t.Context(), []Remote{p.remote("/files/a.png")}); err == nil {
			t.Fatal("a failed store is no error")
		}
	})
}
