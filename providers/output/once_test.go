package output_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// poster renders each agent.message as one post through PostOnce, against
// a fake platform that remembers what was posted.
type poster struct {
	st    core.SinkStore
	mu    sync.Mutex
	posts []string // keys posted on the platform
	finds []string // keys looked up
	// failFind makes the next look-ups fail.
	failFind int
	// savedBeforeDo records whether the intent was durable when Do ran.
	savedBeforeDo []bool
}

type posterState struct {
	Intent *output.Intent `json:"intent,omitempty"`
}

func (p *poster) Received(context.Context, *core.Session, []core.Event) error { return nil }

func (p *poster) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if e.Type != core.TypeAgentMessage {
		return false, nil
	}
	var st posterState
	if len(t.State) > 0 {
		if err := json.Unmarshal(t.State, &st); err != nil {
			return false, err
		}
	}
	key := t.Session.ID + ":" + e.ID
	err := t.PostOnce(ctx, &st, &st.Intent, output.Post{
		Key: key, Point: "post",
		Find: func(_ context.Context, in output.Intent) (bool, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.finds = append(p.finds, in.Key)
			if p.failFind > 0 {
				p.failFind--
				return false, errors.New("platform unreachable")
			}
			return slices.Contains(p.posts, in.Key), nil
		},
		Do: func(ctx context.Context) error {
			pos, err := p.st.SinkPosition(ctx, "test", t.Session.ID)
			if err != nil {
				return err
			}
			var saved posterState
			_ = json.Unmarshal(pos.State, &saved)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.savedBeforeDo = append(p.savedBeforeDo, saved.Intent != nil && saved.Intent.Key == key)
			p.posts = append(p.posts, key)
			return nil
		},
	})
	if err != nil {
		return false, err
	}
	raw, _ := json.Marshal(st)
	t.State = raw
	return true, nil
}

func (p *poster) snapshot() (posts, finds []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.posts), slices.Clone(p.finds)
}

// TestPostOnceAcrossACrash parks the sink at each failpoint, as a crash
// would stop it, and another holder takes the session over once the
// parked one's claim expires by the store's clock (a replica that died
// mid-post releases nothing): the post is made once, looked up only when
// an intent was left unconfirmed.
func TestPostOnceAcrossACrash(t *testing.T) {
	for _, tc := range []struct {
		point     string
		wantPosts int // on the platform before the restart
		wantFinds int // look-ups after the restart
	}{
		{"before_post", 0, 1},
		{"after_post", 1, 1},
	} {
		t.Run(tc.point, func(t *testing.T) {
			clock := &storeClock{}
			st := openStoreAt(t, t.TempDir(), clock.Now)
			p := &poster{st: st, failFind: 1}
			parked, release := make(chan struct{}), make(chan struct{})
			ctx, cancel := context.WithCancel(t.Context())
			sink := output.New(output.Config{Name: "test", Store: st, Renderer: p, RetryMin: time.Millisecond, ClaimTTL: time.Minute,
				Failpoint: func(point string) {
					if point == tc.point {
						close(parked)
						<-release // the process is gone: nothing after this counts
					}
				}})
			if err := sink.Start(ctx); err != nil {
				t.Fatal(err)
			}
			id := newSession(t, st, "test")
			turn(t, st, id)
			<-parked
			// What the crash leaves: the platform as it is now, and the
			// store as it is now.
			posts, _ := p.snapshot()
			if len(posts) != tc.wantPosts {
				t.Fatalf("posts before the crash: %v", posts)
			}
			cancel()
			crashed := &poster{st: st, posts: posts, failFind: 1}
			sink2 := output.New(output.Config{Name: "test", Store: st, Renderer: crashed, RetryMin: time.Millisecond, ClaimRetry: time.Millisecond})
			if err := sink2.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer sink2.Stop(context.Background())
			// The parked holder's claim is live: sink2 waits, then takes
			// the session once the claim expired.
			clock.Advance(time.Hour)
			waitUntil(t, "the restarted sink to finish", func() bool { return sink2.Settled(t.Context()) })
			posts, finds := crashed.snapshot()
			if len(posts) != 1 {
				t.Fatalf("posts after the restart: %v", posts)
			}
			// One failed look-up is retried, never taken for "not posted".
			if len(finds) != tc.wantFinds+1 || finds[0] != posts[0] {
				t.Fatalf("look-ups after the restart: %v (posts %v)", finds, posts)
			}
			for i, ok := range append(p.savedBeforeDo, crashed.savedBeforeDo...) {
				if !ok {
					t.Fatalf("post %d made before its intent was saved", i)
				}
			}
			close(release)
			_ = sink.Stop(context.Background())
		})
	}
}

func TestPostOnceLooksNothingUpWithoutACrash(t *testing.T) {
	st := openStore(t, t.TempDir())
	p := &poster{st: st}
	var points []string
	var mu sync.Mutex
	sink := output.New(output.Config{Name: "test", Store: st, Renderer: p, RetryMin: time.Millisecond,
		Failpoint: func(point string) { mu.Lock(); points = append(points, point); mu.Unlock() }})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink.Stop(context.Background())
	id := newSession(t, st, "test")
	turn(t, st, id)
	turn(t, st, id)
	waitUntil(t, "both answers posted", func() bool { posts, _ := p.snapshot(); return len(posts) == 2 && sink.Settled(t.Context()) })
	posts, finds := p.snapshot()
	if len(finds) != 0 || posts[0] == posts[1] {
		t.Fatalf("posts %v, look-ups %v", posts, finds)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"before_post", "after_post", "before_post", "after_post"}; !slices.Equal(points, want) {
		t.Fatalf("failpoints %v, want %v", points, want)
	}
	pos, err := st.SinkPosition(t.Context(), "test", id)
	if err != nil || string(pos.State) != `{}` {
		t.Fatalf("the intent outlived its post: %s %v", pos.State, err)
	}
}

func TestIntentReadsABareKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"act_1"`, "act_1"},
		{`{"key":"k","at":7}`, "k"},
	} {
		var in output.Intent
		if err := json.Unmarshal([]byte(tc.in), &in); err != nil || in.Key != tc.want {
			t.Fatalf("%s → %+v, %v", tc.in, in, err)
		}
	}
	var in output.Intent
	if err := json.Unmarshal([]byte(`[1]`), &in); err == nil {
		t.Fatal("a list read as an intent")
	}
}
