package providertest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeruntime"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// patience bounds every wait: generous, for a loaded machine and -race.
const patience = time.Minute

// claimTTL is how long a process's claim on a session's output lasts:
// longer than any test, so only the clock moved by a crash test ends it.
const claimTTL = time.Hour

// world is a platform and the gateway around its provider: the store,
// the process that runs the provider (a crash test starts a second one),
// and a record of what the runtime would be asked to do.
type world struct {
	t     *testing.T
	p     Platform
	store *bolt.Store
	// skew moves the store's clock ahead: a crash test expires the dead
	// process's claim with it, as time would.
	skew  atomic.Int64
	deps  providers.Deps
	rt    *fakeruntime.Runtime
	agent *core.Agent
	name  string
	proc  *process
	park  parking
}

// process is one run of the gateway's providers.
type process struct {
	set *providers.Set
	srv *httptest.Server
}

// parking parks a sink the first time it reaches one failpoint, as a
// crash there would leave it, until the test ends; the process that
// takes over passes it.
type parking struct {
	mu      sync.Mutex
	point   string
	parked  chan struct{}
	release chan struct{}
	taken   bool
}

func (pk *parking) at(point string) {
	pk.mu.Lock()
	park := !pk.taken && pk.point != "" && point == pk.point
	pk.taken = pk.taken || park
	parked, release := pk.parked, pk.release
	pk.mu.Unlock()
	if park {
		close(parked)
		<-release
	}
}

func newWorld(t *testing.T, p Platform) *world {
	t.Helper()
	w := &world{t: t, p: p}
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"),
		bolt.Options{Now: func() time.Time { return time.Now().Add(time.Duration(w.skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	w.store = store
	sealer, err := oauth.NewSealer("a master key for the conformance suite")
	if err != nil {
		t.Fatal(err)
	}
	states, err := oauth.NewStates("a master key for the conformance suite", store)
	if err != nil {
		t.Fatal(err)
	}
	if w.agent, err = store.CreateAgent(t.Context(), &core.Agent{Name: "default", Model: "anthropic/conformance"}); err != nil {
		t.Fatal(err)
	}
	w.deps = providers.Deps{Platforms: providers.Platforms{p.Describe()}, Store: store, Sealer: sealer, States: states, PublicURL: "https://gateway.example",
		Logger: slog.New(slog.DiscardHandler), ClaimTTL: claimTTL}
	p.Install(t, w.deps)
	w.rt = fakeruntime.Follow(store)
	w.start()
	return w
}

// start starts a process: the providers built anew over the store, their
// sinks resuming what the store holds, their webhooks served.
func (w *world) start() {
	t := w.t
	t.Helper()
	router := &providers.Intake{Store: w.store, Logger: w.deps.Logger}
	d := w.deps
	d.Intake = router
	set, err := providers.NewSet([]providers.Build{w.p.Build}, d, func(string) func(string) { return w.park.at })
	if err != nil {
		t.Fatal(err)
	}
	router.Links = set
	if err := set.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	set.Register(mux, d.PublicURL, d.States)
	p := &process{set: set, srv: httptest.NewServer(mux)}
	w.name = set.List()[0].Name()
	w.proc = p
	t.Cleanup(func() {
		p.srv.Close()
		// Bounded, as the gateway's own stop is.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		set.Stop(ctx)
	})
}

// parkAt parks the running process's sink for good the first time it
// reaches point (a failpoint of output.PostOnce: "before_post",
// "after_post"); the channel is closed once it has.
func (w *world) parkAt(point string) <-chan struct{} {
	pk := &w.park
	pk.mu.Lock()
	defer pk.mu.Unlock()
	pk.point, pk.parked, pk.release = point, make(chan struct{}), make(chan struct{})
	first, release := w.proc, pk.release
	w.t.Cleanup(func() {
		// The parked process is stopped first, so that what it was about
		// to do fails once it is let go.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		first.set.Stop(ctx)
		close(release)
	})
	return pk.parked
}

// send posts a webhook to the running process and returns the status.
func (w *world) send(h Webhook) int {
	w.t.Helper()
	req, err := http.NewRequestWithContext(w.t.Context(), http.MethodPost, w.proc.srv.URL+h.Path, bytes.NewReader(h.Body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header = h.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// deliver posts a webhook the gateway must take (200).
func (w *world) deliver(h Webhook, what string) {
	w.t.Helper()
	if code := w.send(h); code != http.StatusOK {
		w.t.Fatalf("%s: status %d, want 200", what, code)
	}
}

// sessions are the sessions the provider started.
func (w *world) sessions() []*core.Session {
	w.t.Helper()
	list, err := w.store.ListSessions(w.t.Context(), core.SessionFilter{Provider: w.name})
	if err != nil {
		w.t.Fatal(err)
	}
	return list.Sessions
}

// session is the one session of the conversation.
func (w *world) session() *core.Session {
	w.t.Helper()
	list := w.sessions()
	if len(list) != 1 {
		w.t.Fatalf("%d sessions, want one", len(list))
	}
	s, err := w.store.GetSession(w.t.Context(), list[0].ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// mentioned starts the conversation with a mention and returns its
// session, the only one.
func (w *world) mentioned() *core.Session {
	w.t.Helper()
	w.deliver(w.p.Mention(w.t, "conformance-mention", "please look at the widgets"), "the mention")
	return w.session()
}

// pending are the inputs queued on a session.
func (w *world) pending(id string) []core.Event {
	w.t.Helper()
	evs, err := w.store.Pending(w.t.Context(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return evs
}

// queued is the one input queued on a session, of type typ.
func (w *world) queued(id, typ string) core.Event {
	w.t.Helper()
	p := w.pending(id)
	if len(p) != 1 || p[0].Type != typ {
		var types []string
		for _, e := range p {
			types = append(types, e.Type)
		}
		w.t.Fatalf("queued %q, want one %s", types, typ)
	}
	return p[0]
}

// settled waits until the sink has rendered the session's whole log and
// let go of it (it holds on while a turn is open).
func (w *world) settled(id string) {
	w.t.Helper()
	w.p.WaitFor(w.t, patience, "the output of every turn", func() bool {
		active, err := w.store.ActiveSinkSessions(w.t.Context(), w.name)
		return err == nil && !slices.Contains(active, id)
	})
}

// caughtUp waits until the sink has rendered everything logged so far.
func (w *world) caughtUp(id string) {
	w.t.Helper()
	w.p.WaitFor(w.t, patience, "the output of the log so far", func() bool {
		s, err := w.store.GetSession(w.t.Context(), id)
		if err != nil {
			return false
		}
		pos, err := w.store.SinkPosition(w.t.Context(), w.name, id)
		return err == nil && pos.Seq >= s.LastSeq
	})
}

// postsHolding are the posts that hold text.
func (w *world) postsHolding(text string) []string {
	w.t.Helper()
	var out []string
	for _, s := range w.p.Posts(w.t) {
		if strings.Contains(s, text) {
			out = append(out, s)
		}
	}
	return out
}

// showing reports whether anything the platform shows (a post, a
// status) holds text.
func (w *world) showing(text string) bool {
	w.t.Helper()
	return slices.ContainsFunc(append(w.p.Posts(w.t), w.p.Status(w.t)...), func(s string) bool { return strings.Contains(s, text) })
}

// waitShown waits until the platform shows text.
func (w *world) waitShown(what, text string) {
	w.t.Helper()
	w.p.WaitFor(w.t, patience, what, func() bool { return w.showing(text) })
}
