package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// fakeSealer "seals" by prefixing the aad, so a value opened under
// another record's id fails as a real sealer's would.
type fakeSealer struct{}

func (fakeSealer) Seal(p, aad []byte) ([]byte, error) {
	return append(append(append([]byte{}, aad...), '|'), p...), nil
}

func (fakeSealer) Open(s, aad []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(s, append(append([]byte{}, aad...), '|'))
	if !ok {
		return nil, errors.New("open: wrong record")
	}
	return rest, nil
}

// env is a store, a running service and its API.
type env struct {
	t     *testing.T
	store *bolt.Store
	svc   *Service
	api   *httptest.Server
}

// fastConfig retries quickly, so the tests see backoff without waiting.
func fastConfig() Config {
	return Config{AllowPrivate: true, BackoffBase: 5 * time.Millisecond, BackoffMax: 40 * time.Millisecond, Horizon: time.Minute, PauseAfter: -1}
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Commits, cfg.Sealer = st, st, fakeSealer{}
	svc := New(cfg)
	svc.Start(t.Context())
	mux := http.NewServeMux()
	(&Handler{Service: svc}).Register(mux)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := core.Principal{Admin: r.Header.Get("Authorization") == "Bearer admin"}
		if !p.Admin {
			p.SessionID = "ses_client"
		}
		mux.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(func() {
		api.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := svc.Stop(ctx); err != nil {
			t.Error(err)
		}
		_ = st.Close()
	})
	return &env{t: t, store: st, svc: svc, api: api}
}

// call sends an API request as the admin and decodes the answer into out.
func (e *env) call(method, path string, body any, out any) int {
	e.t.Helper()
	return e.callAs("admin", method, path, body, out)
}

func (e *env) callAs(token, method, path string, body any, out any) int {
	e.t.Helper()
	var r io.Reader
	if s, ok := body.(string); ok {
		r = strings.NewReader(s)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.api.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// session creates a session of agent agt_test with metadata.
func (e *env) session(meta map[string]string) *core.Session {
	e.t.Helper()
	res, err := e.store.CreateSession(e.t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Metadata: meta}})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Session
}

// destination creates a destination through the API.
func (e *env) destination(path string, body map[string]any) core.CreatedDestination {
	e.t.Helper()
	var out core.CreatedDestination
	if code := e.call("POST", path, body, &out); code != http.StatusCreated {
		e.t.Fatalf("create destination: %d %+v", code, out)
	}
	return out
}

// say appends agent messages as the runtime does; the commit wakes the
// dispatcher.
func (e *env) say(sessionID string, texts ...string) []core.Event {
	e.t.Helper()
	evs := make([]core.Event, len(texts))
	for i, txt := range texts {
		evs[i] = core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: txt})
	}
	out, err := e.store.Append(e.t.Context(), sessionID, core.AppendRequest{Events: evs})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) deliveries(q string) []core.Delivery {
	e.t.Helper()
	var page struct {
		Data    []core.Delivery `json:"data"`
		HasMore bool            `json:"has_more"`
	}
	if code := e.call("GET", "/v1/deliveries?limit=1000&"+q, nil, &page); code != 200 {
		e.t.Fatalf("list deliveries: %d", code)
	}
	return page.Data
}

// received is one request a receiver got.
type received struct {
	id       string // webhook-id
	env      Envelope
	status   int
	verified error
}

// receiver is a Standard Webhooks receiver built on the library's
// Verify; answer decides each status (nil: 204).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	answer func(Envelope) int
	got    []received
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rec := received{id: r.Header.Get(standardwebhooks.HeaderWebhookID), status: http.StatusNoContent}
	wh, err := standardwebhooks.NewWebhook(rc.secret)
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	rec.verified = err
	if err := json.Unmarshal(body, &rec.env); err != nil {
		rec.verified = fmt.Errorf("decode envelope: %w", err)
	}
	if rc.answer != nil {
		if code := rc.answer(rec.env); code != 0 {
			rec.status = code
		}
	}
	rc.got = append(rc.got, rec)
	w.WriteHeader(rec.status)
}

func (rc *receiver) setSecret(s string) {
	rc.mu.Lock()
	rc.secret = s
	rc.mu.Unlock()
}

func (rc *receiver) setAnswer(f func(Envelope) int) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received{}, rc.got...)
}

// delivered returns the envelopes answered with a 2xx, in arrival order.
func (rc *receiver) delivered() []Envelope {
	var out []Envelope
	for _, r := range rc.requests() {
		if r.status/100 == 2 {
			out = append(out, r.env)
		}
	}
	return out
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func texts(envs []Envelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		var b core.MessageBody
		_ = json.Unmarshal(e.Event.Body, &b)
		out[i] = b.Text
	}
	return out
}
