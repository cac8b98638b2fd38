package vaults

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a real bbolt store, the real sealer and the handlers, with one
// debug-level JSON logger shared by all of them. Every secret a test uses
// is registered, and when the test ends checkNoLeaks looks for each in
// every answer, the log and the database file.
type env struct {
	t      *testing.T
	store  *bolt.Store
	path   string
	sealer *oauth.Sealer
	logs   *syncBuffer
	log    *slog.Logger
	mux    *http.ServeMux

	mu      sync.Mutex
	answers [][]byte
	secrets []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	path := filepath.Join(t.TempDir(), "switchboard.db")
	store, err := bolt.Open(path, bolt.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := oauth.NewSealer("test master key, not for production")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: store, path: path, sealer: sealer, logs: logs, log: log, mux: http.NewServeMux()}
	(&Handler{Store: store, Sealer: sealer, Logger: log}).Register(e.mux)
	t.Cleanup(e.checkNoLeaks)
	return e
}

func (e *env) resolver(client *http.Client) *Resolver {
	return &Resolver{Store: e.store, Sealer: e.sealer, HTTPClient: client, Logger: e.log}
}

// secret returns a fresh value no test could produce by accident, and
// registers it.
func (e *env) secret(what string) string {
	s := what + "-" + strings.ToLower(rand.Text())
	e.addSecret(s)
	return s
}

func (e *env) addSecret(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets = append(e.secrets, s)
}

// call serves one request as p (nil: unauthenticated) and records the
// answer. body is a string sent as is, or a value sent as JSON.
func (e *env) call(p *core.Principal, method, path string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, rd)
	if p != nil {
		req = req.WithContext(core.WithPrincipal(req.Context(), *p))
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	raw := bytes.Clone(rec.Body.Bytes())
	e.mu.Lock()
	e.answers = append(e.answers, raw)
	e.mu.Unlock()
	return rec.Code, raw
}

// want calls as the admin, checks the status and decodes the answer into
// out (when not nil).
func (e *env) want(status int, method, path string, body, out any) []byte {
	e.t.Helper()
	code, raw := e.call(&core.Principal{Admin: true}, method, path, body)
	if code != status {
		e.t.Fatalf("%s %s = %d %s, want %d", method, path, code, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return raw
}

// stored opens the credential's sealed secret as the store holds it.
func (e *env) stored(id string) (*core.Credential, core.CredentialSecret) {
	e.t.Helper()
	c, sealed, err := e.store.GetCredential(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	sec, err := openSecret(e.sealer, id, sealed)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, sec
}

// fileHas reports whether the database file holds s in the clear. bbolt
// writes committed pages to the file, so reading it while open is fine.
func (e *env) fileHas(s string) bool {
	e.t.Helper()
	raw, err := os.ReadFile(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	return bytes.Contains(raw, []byte(s))
}

func (e *env) checkNoLeaks() {
	t := e.t
	if err := e.store.Close(); err != nil {
		t.Error(err)
	}
	file, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	logs := e.logs.String()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.secrets {
		for i, a := range e.answers {
			if bytes.Contains(a, []byte(s)) {
				t.Errorf("answer %d contains secret %q: %s", i, s, a)
			}
		}
		if strings.Contains(logs, s) {
			t.Errorf("log contains secret %q", s)
		}
		if bytes.Contains(file, []byte(s)) {
			t.Errorf("database file contains secret %q in plaintext", s)
		}
	}
}

// fields decodes an answer into a generic map, to check which keys exist.
func fields(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// apiError decodes a §3.6 error answer.
func apiError(t *testing.T, raw []byte) (typ, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("decode error answer %s: %v", raw, err)
	}
	return e.Error.Type, e.Error.Message
}
