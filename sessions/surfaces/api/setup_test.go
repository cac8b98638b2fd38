package api_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
)

const admin = "admin-secret"

// allowedStdio is the one executable stdio MCP servers may run.
const allowedStdio = "/opt/mcp/allowed-server"

// fakeRuntime records the sessions POST …/wake asked to run.
type fakeRuntime struct {
	mu    sync.Mutex
	wakes []string
}

func (f *fakeRuntime) Wake(id string) {
	f.mu.Lock()
	f.wakes = append(f.wakes, id)
	f.mu.Unlock()
}

// testSealer seals with AES-GCM under a fixed key, as the master key's
// sealer does.
type testSealer struct{ aead cipher.AEAD }

func newTestSealer(t testing.TB) *testSealer {
	block, err := aes.NewCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &testSealer{aead: aead}
}

func (s *testSealer) Seal(plaintext, aad []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plaintext, aad), nil
}

func (s *testSealer) Open(sealed, aad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], aad)
}

type apiEnv struct {
	t     *testing.T
	path  string // the store's file
	store *bolt.Store
	rt    *fakeRuntime
	srv   *httptest.Server
}

func newAPI(t testing.TB) *apiEnv {
	t.Helper()
	return newAPIHeartbeat(t, 50*time.Millisecond)
}

// newAPIHeartbeat is newAPI with SSE heartbeats every hb.
func newAPIHeartbeat(t testing.TB, hb time.Duration) *apiEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := db
	hub := live.NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go hub.Run(ctx, db.Subscribe("sse", 4096))
	rt := &fakeRuntime{}
	mux := http.NewServeMux()
	allow, err := mcpbridge.NewStdioAllow(allowedStdio)
	if err != nil {
		t.Fatal(err)
	}
	(&api.Handler{Store: store, Runtime: rt, Environments: store, Sealer: newTestSealer(t), Hub: hub, MaxBody: 64 << 10, Heartbeat: hb, StdioAllow: allow,
		Links: forbidAcme{}, Repositories: acmeRepositories{}, AttachTokens: store}).Register(mux)
	srv := httptest.NewServer((&api.Auth{AdminToken: admin, Sessions: store, AttachTokens: store}).Wrap(mux))
	t.Cleanup(srv.Close)
	e := &apiEnv{path: path, store: store, rt: rt, srv: srv}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
	}
	return e
}

// call sends a request and returns the status and body.
func (e *apiEnv) call(t testing.TB, token, method, path string, body any, hdr ...string) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, e.srv.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (e *apiEnv) agent(t testing.TB) string {
	t.Helper()
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "a", "model": "anthropic/claude-x", "system": "s"})
	if code != 201 {
		t.Fatalf("create agent: %d %s", code, raw)
	}
	var a struct{ ID string }
	_ = json.Unmarshal(raw, &a)
	return a.ID
}

type created struct {
	ID          string `json:"id"`
	ClientToken string `json:"client_token"`
	Status      string `json:"status"`
}

func (e *apiEnv) session(t testing.TB, agent string, input string) created {
	t.Helper()
	body := map[string]any{"agent": agent}
	if input != "" {
		body["input"] = input
	}
	code, raw := e.call(t, admin, "POST", "/v1/sessions", body)
	if code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	var c created
	_ = json.Unmarshal(raw, &c)
	return c
}

// appendEvents logs n agent.message events as a harness would.
func (e *apiEnv) appendEvents(t testing.TB, id string, n int) {
	t.Helper()
	evs := make([]core.Event, n)
	for i := range evs {
		evs[i] = core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "m"})
	}
	if _, err := e.store.Append(context.Background(), id, core.AppendRequest{Events: evs}); err != nil {
		t.Fatal(err)
	}
}

// errorBody is the §3.6 error shape.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func wantError(t *testing.T, code int, raw []byte, status int, typ, contains string) {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal(raw, &eb); err != nil {
		t.Fatalf("error body %s: %v", raw, err)
	}
	if code != status || eb.Error.Type != typ || !strings.Contains(eb.Error.Message, contains) {
		t.Fatalf("got %d %s, want %d %s containing %q", code, raw, status, typ, contains)
	}
}

// appendInternal is an internal-level event to append.
func appendInternal() core.AppendRequest {
	return core.AppendRequest{Events: []core.Event{core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})}}
}

// forbidAcme is a link policy that refuses keys of the acme account.
type forbidAcme struct{}

func (forbidAcme) CheckLink(_ context.Context, _ *core.Session, key string) error {
	if !regexp.MustCompile(`^github:[a-z]+/[a-z]+#[1-9][0-9]*$`).MatchString(key) {
		return fmt.Errorf("key %q: want github:<owner>/<repo>#<number>: %w", key, core.ErrInvalid)
	}
	if strings.HasPrefix(key, "github:acme/") {
		return fmt.Errorf("key %q belongs to another customer's installation: %w", key, core.ErrForbidden)
	}
	return nil
}

// acmeRepositories knows one code host installation, ins_acme, on the
// account acme.
type acmeRepositories struct{}

func (acmeRepositories) CheckRepositoryAccess(_ context.Context, ra *core.RepositoryAccess) error {
	if ra.Installation != "ins_acme" {
		return fmt.Errorf("repository_access.installation: no installation %q: %w", ra.Installation, core.ErrInvalid)
	}
	for _, r := range ra.Repositories {
		if !strings.HasPrefix(r, "acme/") {
			return fmt.Errorf("repository_access: %s is not a repository of acme: %w", r, core.ErrInvalid)
		}
	}
	return nil
}
