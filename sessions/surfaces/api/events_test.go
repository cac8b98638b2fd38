package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
)

// readCounting counts the session reads the handlers make.
type readCounting struct {
	*bolt.Store
	reads atomic.Int64
}

func (c *readCounting) GetSession(ctx context.Context, id string) (*core.Session, error) {
	c.reads.Add(1)
	return c.Store.GetSession(ctx, id)
}

// TestPostEventsReadsNoSession: queuing an input reads no session record
// before its transaction, which refuses a missing or archived session
// itself; a retry, which names the session's turn, reads it.
func TestPostEventsReadsNoSession(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &readCounting{Store: db}
	mux := http.NewServeMux()
	(&api.Handler{Store: st, Runtime: &fakeRuntime{}, Environments: db, Sealer: newTestSealer(t), Hub: live.NewHub(), MaxBody: 64 << 10, Heartbeat: time.Second,
		Links: forbidAcme{}, Repositories: acmeRepositories{}}).Register(mux)
	srv := httptest.NewServer((&api.Auth{AdminToken: admin, Sessions: db}).Wrap(mux))
	t.Cleanup(srv.Close)
	e := &apiEnv{t: t, store: db, srv: srv}
	agent := e.agent(t)
	s, archived := e.session(t, agent, ""), e.session(t, agent, "")
	if code, raw := e.call(t, admin, "POST", "/v1/sessions/"+archived.ID+"/archive", nil); code != 200 {
		t.Fatalf("archive: %d %s", code, raw)
	}
	msg := map[string]any{"events": []map[string]any{{"type": "user.message", "text": "hi"}}}
	for _, tc := range []struct {
		name, id string
		status   int
	}{
		{"queued", s.ID, 202},
		{"missing", "ses_missing", 404},
		{"archived", archived.ID, 409},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := st.reads.Load()
			if code, raw := e.call(t, admin, "POST", "/v1/sessions/"+tc.id+"/events", msg); code != tc.status {
				t.Fatalf("POST events: %d %s, want %d", code, raw, tc.status)
			}
			if n := st.reads.Load() - before; n != 0 {
				t.Fatalf("%d session reads", n)
			}
		})
	}
	before := st.reads.Load()
	retry := map[string]any{"events": []map[string]any{{"type": "user.retry"}}}
	e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/events", retry)
	if st.reads.Load() == before {
		t.Fatal("a retry queued without reading its session")
	}
}
