package runtime_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// modelProcessEnv, set in this test binary's environment, makes it serve
// the wake benchmark's scripted model server (serveModelProcess) instead
// of running tests.
const modelProcessEnv = "SWITCHBOARD_BENCH_MODEL_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(modelProcessEnv) != "" {
		os.Exit(serveModelProcess(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// serveModelProcess serves a scripted Anthropic server that answers every
// request with a short text. It writes its address ("url <url>"), then a
// line for each request ("arrival <unix ns> <quoted marker>"), stamped on
// entry to its handler, until in ends.
func serveModelProcess(in io.Reader, out io.Writer) int {
	srv := modelserver.New()
	srv.Forget = true
	srv.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Text: "ok"} }
	var mu sync.Mutex
	w := bufio.NewWriter(out)
	srv.OnRequest = func(req modelserver.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "arrival %s %s\n", req.Header.Get(enteredHeader), strconv.Quote(lastUserText(req.Messages)))
		_ = w.Flush()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		r.Header.Set(enteredHeader, strconv.FormatInt(time.Now().UnixNano(), 10))
		srv.ServeHTTP(rw, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	mu.Lock()
	fmt.Fprintf(w, "url http://%s\n", ln.Addr())
	_ = w.Flush()
	mu.Unlock()
	_, _ = io.Copy(io.Discard, in)
	return 0
}

// startModelProcess runs serveModelProcess in a process of its own: the
// server reads and parses requests as long as the woken session's log
// (about a megabyte at 10,000 events), and its garbage, collected in the
// heap the runtime under measurement shares, would slow the wakes it is
// not part of. It returns the server's address and its arrivals.
func startModelProcess(b *testing.B) (string, <-chan arrival) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), modelProcessEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		b.Fatalf("the model server process wrote no address: %v", lines.Err())
	}
	url, ok := strings.CutPrefix(lines.Text(), "url ")
	if !ok {
		b.Fatalf("the model server process wrote %q, not its address", lines.Text())
	}
	// Buffered beyond what one iteration can produce, so a stray request
	// (a retry) never holds the reader up.
	arrivals := make(chan arrival, 64)
	go func() {
		for lines.Scan() {
			a, err := parseArrival(lines.Text())
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				continue
			}
			arrivals <- a
		}
	}()
	return url, arrivals
}

// parseArrival reads an "arrival <unix ns> <quoted marker>" line.
func parseArrival(line string) (arrival, error) {
	rest, ok := strings.CutPrefix(line, "arrival ")
	ns, quoted, found := strings.Cut(rest, " ")
	if !ok || !found {
		return arrival{}, fmt.Errorf("model server process: unexpected line %q", line)
	}
	at, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return arrival{}, fmt.Errorf("model server process: %q: %w", line, err)
	}
	marker, err := strconv.Unquote(quoted)
	if err != nil {
		return arrival{}, fmt.Errorf("model server process: %q: %w", line, err)
	}
	return arrival{marker: marker, at: time.Unix(0, at)}, nil
}
