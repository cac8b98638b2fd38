package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// binPath is the switchboard binary built once for the package's tests,
// with the test tools compiled in.
var binPath string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && os.Getenv("CI") != "true" {
		// The end-to-end tests, which start the binary, are left out:
		// serveBinary skips them. The package's unit tests run.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "switchboard-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-tags", "switchboard_testtools", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build switchboard:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serveBinary is the binary TestMain built. Under -short (outside CI)
// none is built, and the end-to-end test that asks for it skips.
func serveBinary(t testing.TB) string {
	t.Helper()
	if binPath == "" {
		t.Skip("-short leaves the end-to-end tests out (scripts/test -short): they start the gateway's binary; CI runs them")
	}
	return binPath
}

const adminToken = "test-admin-token-5f1c9e7a2b4d6083"

// patience bounds the harness's waits for the child: generous, since a
// busy machine is slow, and reached only when something is wrong.
const patience = 60 * time.Second

// syncBuffer collects a child's output safely, and tells waiters of
// each write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed at the next write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// holds reports whether the output holds sub, and else gives a channel
// closed at the next write.
func (s *syncBuffer) holds(sub string) (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.Contains(s.b.String(), sub) {
		return true, nil
	}
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return false, s.written
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a running `switchboard serve` child process.
type server struct {
	t       testing.TB
	cmd     *exec.Cmd
	url     string
	dataDir string
	env     map[string]string
	out     *syncBuffer
	exited  chan struct{}
	exitErr error
}

// anyPort is the SWITCHBOARD_ADDR of a serve the tests start: the kernel
// picks a free port and serve writes the address to <data dir>/addr.
const anyPort = "127.0.0.1:0"

// spawn starts the binary with args in environ, its output collected and
// its exit watched.
func spawn(t testing.TB, environ []string, args ...string) *server {
	t.Helper()
	s := &server{t: t, out: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(serveBinary(t), args...)
	s.cmd.Env = environ
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exitErr = s.cmd.Wait(); close(s.exited) }()
	return s
}

// withEnv is environ with env's variables after it (so they win).
func withEnv(environ []string, env map[string]string) []string {
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	return environ
}

// startServer runs serve on dataDir with env and waits until it answers.
func startServer(t testing.TB, dataDir string, env map[string]string) *server {
	t.Helper()
	env = onPostgres(t, env)
	// The address file of an earlier process on the data dir is stale.
	addrFile := filepath.Join(dataDir, "addr")
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	s := spawn(t, withEnv(append(childEnviron(),
		"SWITCHBOARD_ADDR="+anyPort,
		"SWITCHBOARD_DATA_DIR="+dataDir,
		"SWITCHBOARD_ADMIN_TOKEN="+adminToken,
		"SWITCHBOARD_LOG_LEVEL=debug",
	), env), "serve")
	s.dataDir, s.env = dataDir, env
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("serve output:\n%s", s.out.String())
		}
	})
	deadline := time.Now().Add(patience)
	for s.url == "" {
		select {
		case <-s.exited:
			t.Fatalf("serve exited early: %v\n%s", s.exitErr, s.out.String())
		default:
		}
		if b, err := os.ReadFile(addrFile); err == nil {
			s.url = "http://" + strings.TrimSpace(string(b))
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve wrote no %s:\n%s", addrFile, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		select {
		case <-s.exited:
			t.Fatalf("serve exited early: %v\n%s", s.exitErr, s.out.String())
		default:
		}
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer /healthz:\n%s", s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// e2ePostgres names the variable that runs the end-to-end tests on the
// PostgreSQL store instead of bbolt: ./scripts/test sets it for a second
// pass over the tests that cover the store's whole contract end to end.
const e2ePostgres = "SWITCHBOARD_E2E_POSTGRES"

// onPostgres gives a test's servers a database of their own when the tests
// run on PostgreSQL. It adds to env in place: tests change the map they
// gave (a failpoint removed) before they restart, and a restart must find
// the same database.
func onPostgres(t testing.TB, env map[string]string) map[string]string {
	if os.Getenv(e2ePostgres) != "1" {
		return env
	}
	if _, ok := env["SWITCHBOARD_STORE"]; ok {
		return env
	}
	if env == nil {
		env = map[string]string{}
	}
	env["SWITCHBOARD_STORE"] = pgtest.DSN(t)
	env["SWITCHBOARD_MASTER_KEY"] = "e2e-postgres-master-key-0123456789abcdef"
	return env
}

// restart starts a new process on the same data dir and environment.
func (s *server) restart() *server {
	s.t.Helper()
	return startServer(s.t, s.dataDir, s.env)
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// waitParked waits until the process says it parked at the failpoint name
// (testtools.go's parkHere: "failpoint parked: slack before_post"), so that
// a SIGKILL lands in the window the test means. It fails the test when the
// process exits first or never parks there.
func (s *server) waitParked(name string) {
	s.t.Helper()
	s.waitLog("failpoint parked: " + name + "\n")
}

// waitLog waits until the process's output holds line. It fails the test
// when the process exits first or never writes it.
func (s *server) waitLog(line string) {
	s.t.Helper()
	timeout := time.After(patience)
	for {
		ok, written := s.out.holds(line)
		if ok {
			return
		}
		select {
		case <-written:
		case <-s.exited:
			s.t.Fatalf("serve exited before writing %q: %v\n%s", line, s.exitErr, s.out.String())
		case <-timeout:
			s.t.Fatalf("serve never wrote %q:\n%s", line, s.out.String())
		}
	}
}

// term sends SIGTERM and waits (bounded by patience) for a clean exit.
func (s *server) term() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return s.exitErr
	case <-time.After(patience):
		s.t.Fatalf("serve did not stop on SIGTERM:\n%s", s.out.String())
		return nil
	}
}

// do sends a request with the admin token; body is JSON-encoded unless it
// is a string or []byte.
func (s *server) do(method, path string, body any, hdr ...string) (int, []byte) {
	s.t.Helper()
	return doReq(s.t, method, s.url+path, adminToken, body, hdr...)
}

// metricsWith reads /metrics until it holds every one of lines and
// returns that read: the counters of a turn move a moment after the
// session shows it idle, one after another.
func (s *server) metricsWith(lines ...string) string {
	s.t.Helper()
	var metrics string
	waitUntil(s.t, fmt.Sprintf("/metrics to hold %q", lines), func() bool {
		code, raw := doReq(s.t, "GET", s.url+"/metrics", "", nil)
		if code != http.StatusOK {
			s.t.Fatalf("/metrics: %d %s", code, raw)
		}
		metrics = string(raw)
		return !slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(metrics, l) })
	})
	return metrics
}

func doReq(t testing.TB, method, url, token string, body any, hdr ...string) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// mustJSON decodes raw into v, failing the test on error.
func mustJSON(t testing.TB, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// sessionState is the part of a session the tests watch.
type sessionState struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	StopReason *string `json:"stop_reason"`
	LastSeq    uint64  `json:"last_seq"`
	Tenant     string  `json:"tenant"`
	Origin     struct {
		Title string `json:"title"`
	} `json:"origin"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func (s *server) session(id string) sessionState {
	s.t.Helper()
	code, raw := s.do("GET", "/v1/sessions/"+id, nil)
	if code != 200 {
		s.t.Fatalf("get session: %d %s", code, raw)
	}
	var st sessionState
	mustJSON(s.t, raw, &st)
	return st
}

// waitFor polls until cond holds for the session, or fails after patience.
func (s *server) waitFor(id string, what string, cond func(sessionState, []event) bool) (sessionState, []event) {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		st := s.session(id)
		evs := s.events(id)
		if cond(st, evs) {
			return st, evs
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; session %+v; events %v", what, st, types(evs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitIdle waits until the session rests with nothing pending.
func (s *server) waitIdle(id string) (sessionState, []event) {
	s.t.Helper()
	return s.waitFor(id, "idle", func(st sessionState, evs []event) bool {
		if st.Status != "idle" {
			return false
		}
		_, raw := s.do("GET", "/v1/sessions/"+id+"/pending", nil)
		return !strings.Contains(string(raw), `"id"`)
	})
}

// event is a logged event as the API shows it.
type event struct {
	ID          string          `json:"id"`
	SessionID   string          `json:"session_id"`
	Seq         uint64          `json:"seq"`
	Type        string          `json:"type"`
	Level       string          `json:"level"`
	Actor       string          `json:"actor"`
	TurnID      string          `json:"turn_id"`
	CreatedAt   string          `json:"created_at"`
	QueuedAt    *string         `json:"queued_at"`
	ProcessedAt *string         `json:"processed_at"`
	Body        json.RawMessage `json:"body"`
}

func (s *server) events(id string) []event {
	s.t.Helper()
	return listData[event](s, "/v1/sessions/"+id+"/events?limit=1000")
}

// listData is the data of a list page the API answers at path.
func listData[T any](s *server, path string) []T {
	s.t.Helper()
	code, raw := s.do("GET", path, nil)
	if code != 200 {
		s.t.Fatalf("GET %s: %d %s", path, code, raw)
	}
	var page struct {
		Data []T `json:"data"`
	}
	mustJSON(s.t, raw, &page)
	return page.Data
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func count(evs []event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// checkLog asserts the log's integrity: seq 1..n without gaps, no
// duplicated event id.
func checkLog(t testing.TB, evs []event) {
	t.Helper()
	seen := map[string]bool{}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("seq gap: event %d has seq %d; log %v", i, e.Seq, types(evs))
		}
		if seen[e.ID] {
			t.Fatalf("event %s logged twice", e.ID)
		}
		seen[e.ID] = true
	}
}

// execServe prepares a serve process on dir without starting it.
func execServe(t *testing.T, dir string) *exec.Cmd {
	cmd := exec.Command(serveBinary(t), "serve")
	cmd.Env = append(childEnviron(), "SWITCHBOARD_ADDR="+anyPort, "SWITCHBOARD_DATA_DIR="+dir, "SWITCHBOARD_ADMIN_TOKEN="+adminToken)
	return cmd
}

// sessionsByKey lists the sessions of an origin key.
func (s *server) sessionsByKey(key string) []sessionState {
	s.t.Helper()
	return listData[sessionState](s, "/v1/sessions?origin_key="+url.QueryEscape(key))
}

// sessionByKey waits for the one session of an origin key.
func (s *server) sessionByKey(key string) string {
	s.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		if list := s.sessionsByKey(key); len(list) == 1 {
			return list[0].ID
		} else if len(list) > 1 {
			s.t.Fatalf("%d sessions for %s", len(list), key)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no session for %s", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childEnviron is the test's environment as a serve child gets it: the
// harness's own variables (SWITCHBOARD_E2E_*, SWITCHBOARD_BENCH_*,
// SWITCHBOARD_SCREENSHOTS) left out, since serve warns of variables it
// does not know. SWITCHBOARD_TEST_* stay: the test build reads them.
func childEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SWITCHBOARD_E2E_") || strings.HasPrefix(kv, "SWITCHBOARD_BENCH_") || strings.HasPrefix(kv, "SWITCHBOARD_SCREENSHOTS=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
