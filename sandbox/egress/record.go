package egress

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

const (
	// foldWindow: an identical decision (same session, host, port, method,
	// outcome and reason) within it is counted, not recorded, so a loop
	// hammering one host costs a trickle of events, not a flood.
	foldWindow = 10 * time.Second
	// recordQueue bounds the decisions waiting to be recorded; past it
	// they are dropped with a warning rather than slowing the proxy.
	recordQueue = 1024
	maxFoldKeys = 4096
)

type recordKey struct {
	session, host, method, decision, reason, credential string
	port                                                int
}

type recordItem struct {
	session string
	body    core.EgressBody
}

// recorder hands decisions to Config.Record on one goroutine, folding
// repeats.
type recorder struct {
	record func(ctx context.Context, sessionID string, body core.EgressBody)
	log    *slog.Logger
	ch     chan recordItem
	done   chan struct{}

	mu     sync.Mutex
	last   map[recordKey]time.Time
	folded map[recordKey]int
	closed bool
}

func newRecorder(record func(context.Context, string, core.EgressBody), log *slog.Logger) *recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &recorder{record: record, log: log, ch: make(chan recordItem, recordQueue), done: make(chan struct{}), last: map[recordKey]time.Time{}, folded: map[recordKey]int{}}
	go r.run()
	return r
}

func (r *recorder) add(session string, b core.EgressBody) {
	if r.record == nil {
		return
	}
	k := recordKey{session, b.Host, b.Method, b.Decision, b.Reason, b.CredentialID, b.Port}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if at, ok := r.last[k]; ok && now.Sub(at) < foldWindow {
		r.folded[k]++
		return
	}
	b.Repeats = r.folded[k]
	delete(r.folded, k)
	if len(r.last) >= maxFoldKeys {
		for key, at := range r.last {
			if now.Sub(at) >= foldWindow {
				delete(r.last, key)
				delete(r.folded, key)
			}
		}
	}
	r.last[k] = now
	select {
	case r.ch <- recordItem{session, b}:
	default:
		r.log.Warn("egress decision not recorded: the recorder is behind", "session_id", session, "host", b.Host, "decision", b.Decision)
	}
}

func (r *recorder) run() {
	defer close(r.done)
	for it := range r.ch {
		r.recordOne(it)
	}
}

// recordOne records one decision. A panic in it loses that record only:
// logged once with its stack, the recorder goes on with the others.
func (r *recorder) recordOne(it recordItem) {
	defer core.Recover(r.log, nil, "session_id", it.session, "host", it.body.Host)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.record(ctx, it.session, it.body)
}

// close records what is queued, then stops.
func (r *recorder) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.ch)
	}
	r.mu.Unlock()
	<-r.done
}
