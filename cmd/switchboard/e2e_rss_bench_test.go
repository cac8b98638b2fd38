package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// BenchmarkServeRSS measures the resident memory of a `switchboard serve`
// child (VmRSS of /proc/<pid>/status) after load, beside its own idle
// resident memory in the same run: the baseline is read once start-up has
// settled, before any request. Each sub-benchmark does its whole
// measurement once, whatever b.N; run by scripts/bench.
//
//   - turns: 1,000 turns over 100 sessions (10 each, the sessions run
//     side by side), each turn's end seen on the session's event stream.
//   - sessions: SWITCHBOARD_BENCH_RSS_SESSIONS sessions (default 100,000),
//     each created with an input through the API and run to the end of
//     its one turn, so that every per-session cache of the process (the
//     store's session records, the runtime's logs and contexts, the live
//     hub) has seen each. Its target is absolute (under 200 MB), not a
//     ratio: the caches must be bounded whatever the number of sessions.
//
// Besides rss-mb it reports anon-mb (RssAnon: the heap, stacks), since
// VmRSS also counts the pages of the bbolt file the process has mapped
// and touched (RssFile), which the kernel reclaims under pressure.
func BenchmarkServeRSS(b *testing.B) {
	b.Run("turns", func(b *testing.B) {
		r := startRSSServer(b)
		idle := r.steady()
		b.ResetTimer()
		r.turns(100, 10)
		b.StopTimer()
		r.report(idle, r.after())
	})
	b.Run("sessions", func(b *testing.B) {
		n := benchSetting(b, "SWITCHBOARD_BENCH_RSS_SESSIONS", 100_000)
		r := startRSSServer(b)
		idle := r.steady()
		b.ResetTimer()
		r.touch(n, 64)
		b.StopTimer()
		r.report(idle, r.after())
	})
}

// rssServer is a serve child answered by a scripted model, and a client
// whose calls may run on any goroutine (they return errors, never fail
// the benchmark themselves).
type rssServer struct {
	b      *testing.B
	srv    *server
	client *http.Client
}

func startRSSServer(b *testing.B) *rssServer {
	ms, hs := modelserver.Start(b)
	ms.APIKey = "test-key"
	ms.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Text: "done"} }
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_SANDBOX"] = "none"
	env["SWITCHBOARD_LOG_LEVEL"] = "warn"
	srv := startServer(b, b.TempDir(), env)
	r := &rssServer{b: b, srv: srv, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: patience}}
	if code, err := r.call("GET", "/readyz", nil, nil); err != nil || code != 200 {
		b.Fatalf("readyz: %d %v", code, err)
	}
	return r
}

// memory is what /proc/<pid>/status says of the child, in MB.
type memory struct{ rss, anon float64 }

func (r *rssServer) read() memory {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.srv.cmd.Process.Pid))
	if err != nil {
		r.b.Fatal(err)
	}
	var m memory
	for line := range strings.Lines(string(raw)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.rss = kb / 1024
		case "RssAnon":
			m.anon = kb / 1024
		}
	}
	return m
}

// steady samples the child's memory until it stops moving (the samples of
// the last 3 s within 1 % of each other: the runtime's scavenger returns
// freed pages gradually, and serve returns them once it is quiet after a
// burst, core/memtrim) and returns the last sample; after a bounded wait
// it returns the last sample as it is.
func (r *rssServer) steady() memory {
	const window, every, most = 15, 200 * time.Millisecond, 60 * time.Second
	var samples []float64
	var m memory
	for deadline := time.Now().Add(most); time.Now().Before(deadline); time.Sleep(every) {
		m = r.read()
		samples = append(samples, m.rss)
		if len(samples) < window {
			continue
		}
		last := samples[len(samples)-window:]
		if lo, hi := slices.Min(last), slices.Max(last); hi-lo <= hi/100 {
			return m
		}
	}
	r.b.Logf("memory still moving after %v: %v", most, samples[max(0, len(samples)-window):])
	return m
}

// after is the steady memory once the load's clients have gone: the
// connections they kept alive (each a goroutine and its buffers in the
// child) are closed first.
func (r *rssServer) after() memory {
	r.client.CloseIdleConnections()
	return r.steady()
}

func (r *rssServer) report(idle, after memory) {
	r.b.ReportMetric(after.rss, "rss-mb")
	r.b.ReportMetric(idle.rss, "baseline-rss-mb")
	r.b.ReportMetric(after.anon, "anon-mb")
	r.b.ReportMetric(idle.anon, "baseline-anon-mb")
	r.b.Logf("idle: rss %.1f MB (anon %.1f); after: rss %.1f MB (anon %.1f); ratio %.2f",
		idle.rss, idle.anon, after.rss, after.anon, after.rss/idle.rss)
}

// call sends a request with the admin token and decodes a JSON answer
// into out (when given and the status is 2xx).
func (r *rssServer) call(method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, r.srv.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil
}

func (r *rssServer) create(input string) (string, error) {
	var s struct{ ID string }
	_, err := r.call("POST", "/v1/sessions", map[string]any{"agent": "default", "input": input}, &s)
	return s.ID, err
}

// follow opens the session's event stream after seq; done reads it until
// n more turns have completed.
func (r *rssServer) follow(id string) (*turnStream, error) {
	req, err := http.NewRequest("GET", r.srv.url+"/v1/sessions/"+id+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Accept", "text/event-stream")
	// No client timeout: the stream lives as long as the session's turns.
	resp, err := (&http.Client{Transport: r.client.Transport}).Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("follow %s: %d", id, resp.StatusCode)
	}
	return &turnStream{body: resp.Body, sc: bufio.NewScanner(resp.Body)}, nil
}

type turnStream struct {
	body io.Closer
	sc   *bufio.Scanner
}

// completed reads until the next turn.completed event.
func (t *turnStream) completed() error {
	for t.sc.Scan() {
		if t.sc.Text() == "event: turn.completed" {
			return nil
		}
	}
	if err := t.sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

func (t *turnStream) close() { t.body.Close() }

// turns runs perSession turns on each of sessions sessions, side by side:
// a session's next input is posted when its turn has completed.
func (r *rssServer) turns(sessions, perSession int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	errs := make(chan error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			errs <- r.run(ctx, i, perSession)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			r.b.Fatal(err)
		}
	}
}

func (r *rssServer) run(ctx context.Context, i, turns int) error {
	id, err := r.create("session " + strconv.Itoa(i) + " turn 0")
	if err != nil {
		return err
	}
	ts, err := r.follow(id)
	if err != nil {
		return err
	}
	defer ts.close()
	stop := context.AfterFunc(ctx, ts.close)
	defer stop()
	for t := range turns {
		if t > 0 {
			ev := map[string]any{"type": "user.message", "text": "session " + strconv.Itoa(i) + " turn " + strconv.Itoa(t)}
			if _, err := r.call("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []any{ev}}, nil); err != nil {
				return err
			}
		}
		if err := ts.completed(); err != nil {
			return fmt.Errorf("session %s turn %d: %w", id, t, err)
		}
	}
	return nil
}

// touch creates n sessions, each with one input, from workers clients,
// and waits for each one's turn to complete on its event stream.
func (r *rssServer) touch(n, workers int) {
	var next, failed atomic.Int64
	var first atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || failed.Load() > 0 {
					return
				}
				if err := r.touchOne(i); err != nil {
					if failed.Add(1) == 1 {
						first.Store(err)
					}
					return
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		r.b.Fatal(first.Load())
	}
	r.b.Logf("%d sessions touched in %v", n, time.Since(start).Round(time.Millisecond))
}

func (r *rssServer) touchOne(i int64) error {
	id, err := r.create("touch " + strconv.FormatInt(i, 10))
	if err != nil {
		return err
	}
	ts, err := r.follow(id)
	if err != nil {
		return err
	}
	defer ts.close()
	return ts.completed()
}
