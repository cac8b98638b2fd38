package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// backoffs records the reconnect backoffs Follow waits out; each ends at
// once, or never from the nth on when hangFrom is set (then onHang runs).
type backoffs struct {
	mu       sync.Mutex
	waits    []time.Duration
	hangFrom int
	onHang   func()
}

func (b *backoffs) after(d time.Duration) <-chan time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waits = append(b.waits, d)
	if b.hangFrom > 0 && len(b.waits) >= b.hangFrom {
		if b.onHang != nil {
			b.onHang()
		}
		return nil // never ends
	}
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func (b *backoffs) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprint(b.waits)
}

func sseEvent(seq int) string {
	return fmt.Sprintf("id: %d\nevent: agent.message\ndata: {\"id\":\"evt_%d\",\"session_id\":\"ses_1\",\"seq\":%d,\"type\":\"agent.message\",\"level\":\"user\",\"actor\":\"agent\",\"created_at\":\"2026-11-22T10:00:00.123Z\",\"body\":{\"text\":\"m%d\"}}\n\n", seq, seq, seq, seq)
}

// TestFollowResumes drops the stream twice (once abruptly mid-message,
// once cleanly) and checks that Follow resumes with Last-Event-ID, skips
// the replayed duplicate and hands every event over once, in order.
func TestFollowResumes(t *testing.T) {
	var mu sync.Mutex
	var conns []http.Header
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/sessions/ses_1/events" || r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":{"type":"invalid_request","message":"bad request"}}`, 400)
			return
		}
		mu.Lock()
		conns = append(conns, r.Header.Clone())
		queries = append(queries, r.URL.RawQuery)
		n := len(conns)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		flush := func() { w.(http.Flusher).Flush() }
		switch n {
		case 1:
			fmt.Fprint(w, "retry: 1000\n\n", sseEvent(1), ": heartbeat\n\n")
			// One event with its data split over two lines.
			fmt.Fprint(w, "id: 2\nevent: agent.message\ndata: {\"seq\":2,\"type\":\"agent.message\",\n",
				"data: \"body\":{\"text\":\"m2\"}}\n\n", sseEvent(3))
			fmt.Fprint(w, "id: 4\nevent: agent.message\n") // cut before its data
			flush()
			panic(http.ErrAbortHandler)
		case 2:
			fmt.Fprint(w, sseEvent(3), sseEvent(4), ": heartbeat\n\n", sseEvent(5))
			flush()
		default:
			fmt.Fprint(w, sseEvent(6))
			flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok", nil)
	waits := &backoffs{}
	client.SetBackoffTimer(c, waits.after)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := errors.New("enough")
	var got []uint64
	err := c.Follow(ctx, "ses_1", 0, "progress", func(e core.Event) error {
		got = append(got, e.Seq)
		if e.Seq == 6 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Follow returned %v", err)
	}
	if fmt.Sprint(got) != "[1 2 3 4 5 6]" {
		t.Fatalf("events %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 3 {
		t.Fatalf("%d connections", len(conns))
	}
	wantLast := []string{"", "3", "5"}
	wantQuery := []string{"level=progress", "after=3&level=progress", "after=5&level=progress"}
	for i, h := range conns {
		if h.Get("Last-Event-ID") != wantLast[i] || queries[i] != wantQuery[i] {
			t.Fatalf("connection %d: Last-Event-ID %q query %q", i+1, h.Get("Last-Event-ID"), queries[i])
		}
	}
	// A stream that was open reconnects after the shortest backoff.
	if got := waits.String(); got != "[500ms 500ms]" {
		t.Fatalf("reconnected after %s, want 0.5 s each time", got)
	}
}

func TestFollowStopsOnClientErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		fmt.Fprint(w, `{"error":{"type":"not_found","message":"session ses_x: not found"}}`)
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok", nil)
	waits := &backoffs{}
	client.SetBackoffTimer(c, waits.after)
	err := c.Follow(context.Background(), "ses_x", 0, "", func(core.Event) error { return nil })
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Message != "session ses_x: not found" {
		t.Fatalf("err %v", err)
	}
	if n := calls.Load(); n != 1 || waits.String() != "[]" {
		t.Fatalf("a 404 was retried: %d calls, backoffs %s", n, waits)
	}
}

// TestFollowRetriesServerErrorsUntilContextEnds: 503s are retried with a
// backoff that doubles up to 2 s, until the context ends, which ends a
// backoff's wait too.
func TestFollowRetriesServerErrorsUntilContextEnds(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(503)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client.New(srv.URL, "tok", nil)
	// The fifth backoff never ends by itself: the context ends during it.
	waits := &backoffs{hangFrom: 5, onHang: cancel}
	client.SetBackoffTimer(c, waits.after)
	err := c.Follow(ctx, "ses_1", 0, "", func(core.Event) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n := calls.Load(); n != 5 || waits.String() != "[500ms 1s 2s 2s 2s]" {
		t.Fatalf("%d attempts, backoffs %s; want 5 attempts after 0.5, 1, 2 and 2 s", n, waits)
	}
}

func TestFollowEndsWithContextWhileIdle(t *testing.T) {
	open := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		close(open)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-open; cancel() }() // the stream is open and idle
	err := client.New(srv.URL, "tok", nil).Follow(ctx, "ses_1", 0, "", func(core.Event) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestFollowRefusesNonStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"data":[],"has_more":false}`)
	}))
	defer srv.Close()
	err := client.New(srv.URL, "tok", nil).Follow(context.Background(), "ses_1", 0, "", func(core.Event) error { return nil })
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err %v", err)
	}
}
