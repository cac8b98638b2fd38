package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseEvent is one dispatched SSE message.
type sseEvent struct {
	id    uint64
	typ   string
	data  string
	level string
}

// sseStream reads an event stream.
type sseStream struct {
	resp     *http.Response
	sc       *bufio.Scanner
	comments int
}

func openSSE(t testing.TB, e *apiEnv, token, path string, hdr ...string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("SSE answer %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &sseStream{resp: resp, sc: sc}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// next returns the next event, counting comments on the way.
func (s *sseStream) next() (sseEvent, error) {
	var ev sseEvent
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if ev.typ != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
			s.comments++
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
			var m struct {
				Seq   uint64 `json:"seq"`
				Level string `json:"level"`
			}
			if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
				return ev, fmt.Errorf("data %q: %w", ev.data, err)
			}
			if m.Seq != ev.id {
				return ev, fmt.Errorf("id %d but data seq %d", ev.id, m.Seq)
			}
			ev.level = m.Level
		}
	}
	if err := s.sc.Err(); err != nil {
		return ev, err
	}
	return ev, fmt.Errorf("stream ended")
}

// expect reads events and checks they are exactly seqs from..to in order.
func (s *sseStream) expect(t testing.TB, from, to uint64) {
	t.Helper()
	for want := from; want <= to; want++ {
		ev, err := s.next()
		if err != nil {
			t.Fatalf("waiting for seq %d: %v", want, err)
		}
		if ev.id != want {
			t.Fatalf("got seq %d, want %d", ev.id, want)
		}
	}
}

func TestSSEResumeWithLastEventID(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	e.appendEvents(t, s.ID, 5)
	st := openSSE(t, e, admin, "/v1/sessions/"+s.ID+"/events")
	st.expect(t, 1, 3)
	st.close()
	e.appendEvents(t, s.ID, 3)
	st = openSSE(t, e, admin, "/v1/sessions/"+s.ID+"/events", "Last-Event-ID", "3")
	defer st.close()
	st.expect(t, 4, 8)
	e.appendEvents(t, s.ID, 2)
	st.expect(t, 9, 10)
	// ?after= does the same for clients that cannot set headers.
	st2 := openSSE(t, e, s.ClientToken, "/v1/sessions/"+s.ID+"/events?after=7")
	defer st2.close()
	st2.expect(t, 8, 10)
}

// TestSSENoGapAtTheSeam connects while events are being appended: the
// stream must hold every seq once, in order, across history and live.
func TestSSENoGapAtTheSeam(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	// Events are appended before the stream opens, all the while it
	// opens, and after: wherever the seam falls, appends are around it.
	started, connected := make(chan struct{}), make(chan struct{})
	total := make(chan uint64, 1)
	go func() {
		var n uint64
		for ; n < 100; n++ {
			e.appendEvents(t, s.ID, 1)
		}
		close(started)
	appending:
		for ; ; n++ {
			select {
			case <-connected:
				break appending
			default:
				e.appendEvents(t, s.ID, 1)
			}
		}
		for range 100 {
			e.appendEvents(t, s.ID, 1)
			n++
		}
		total <- n
	}()
	<-started
	st := openSSE(t, e, admin, "/v1/sessions/"+s.ID+"/events")
	defer st.close()
	close(connected)
	st.expect(t, 1, <-total)
}

func TestSSELevelAndHeartbeat(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "hi") // the input stays queued: not in the log
	e.appendEvents(t, s.ID, 2)          // user level
	st := openSSE(t, e, admin, "/v1/sessions/"+s.ID+"/events?level=user")
	defer st.close()
	st.expect(t, 1, 2)
	ev, err := e.store.Append(context.Background(), s.ID, appendInternal())
	if err != nil || len(ev) != 1 {
		t.Fatal(err)
	}
	e.appendEvents(t, s.ID, 1)
	next, err := st.next()
	if err != nil || next.id != 4 || next.level != "user" {
		t.Fatalf("after an internal event, got %+v %v; want seq 4 at user level", next, err)
	}
	// Nothing is logged now: a heartbeat comment comes anyway, and the
	// stream goes on after it.
	st.waitComment(t)
	e.appendEvents(t, s.ID, 1)
	if next, err := st.next(); err != nil || next.id != 5 {
		t.Fatalf("after the heartbeat, got %+v %v; want seq 5", next, err)
	}
}

// waitComment reads the stream up to a comment line (a heartbeat); an
// event first, the stream's end or 30 s without one fail the test.
func (s *sseStream) waitComment(t *testing.T) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		for s.sc.Scan() {
			switch line := s.sc.Text(); {
			case strings.HasPrefix(line, ":"):
				s.comments++
				got <- nil
				return
			case line != "":
				got <- fmt.Errorf("%q before a heartbeat comment", line)
				return
			}
		}
		got <- fmt.Errorf("stream ended before a heartbeat comment: %v", s.sc.Err())
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		s.close()
		<-got
		t.Fatal("no heartbeat comment in 30 s while nothing was logged")
	}
}

// TestSSEThousandSubscribers: 1,000 concurrent streams on one session each
// receive every event in order.
func TestSSEThousandSubscribers(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 streams: skipped with -short")
	}
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	e.srv.Client().Transport.(*http.Transport).MaxConnsPerHost = 0
	const subs, total = 1000, 40
	streams := make([]*sseStream, subs)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() { streams[i] = openSSE(t, e, admin, "/v1/sessions/"+s.ID+"/events") })
	}
	wg.Wait()
	defer func() {
		for _, st := range streams {
			st.close()
		}
	}()
	errs := make(chan error, subs)
	for _, st := range streams {
		wg.Go(func() {
			for want := uint64(1); want <= total; want++ {
				ev, err := st.next()
				if err != nil || ev.id != want {
					errs <- fmt.Errorf("want seq %d, got %d (%v)", want, ev.id, err)
					return
				}
			}
		})
	}
	for range total / 4 {
		e.appendEvents(t, s.ID, 4)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
