package bolt

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// patience bounds a wait for something that must happen; reached only
// when it does not.
const patience = 30 * time.Second

// TestTurnAndPostingWritesJoinTheGroupCommit: the writes a turn and a
// platform's output sink make join the group commit rather than taking
// the writer for a commit and syncs of their own, which the acks and
// appends queued behind would wait for. Each is started while a commit
// holds the writer, and must queue on the committer.
func TestTurnAndPostingWritesJoinTheGroupCommit(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := t.Context()
	// A session of the sink's platform with a turn open: the sink has it
	// marked, so releasing it writes.
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Origin: &core.Origin{Provider: "chat", Key: "chat:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	started := core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})
	if _, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{started}}); err != nil {
		t.Fatal(err)
	}
	claim, ok, err := s.ClaimSink(ctx, "chat", id, "replica-a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("claim sink: %v %v", ok, err)
	}
	lease, ok, err := s.TakeLease(ctx, id, "replica-a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, benchBody())
	writes := []struct {
		name  string
		write func(context.Context) error
	}{
		{"append", func(ctx context.Context) error {
			_, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{ev}})
			return err
		}},
		{"renew lease", func(ctx context.Context) error { return s.RenewLease(ctx, lease, time.Minute) }},
		{"save sink position", func(ctx context.Context) error {
			return s.SaveSinkPosition(ctx, "chat", id, claim, core.SinkPosition{Seq: 1})
		}},
		{"renew sink claim", func(ctx context.Context) error { return s.RenewSinkClaim(ctx, "chat", id, claim, time.Minute) }},
		{"release sink", func(ctx context.Context) error {
			_, err := s.ReleaseSink(ctx, "chat", id, 1)
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			queued := make(chan struct{}, 2)
			s.commit.mu.Lock()
			s.commit.queued = func() { queued <- struct{}{} }
			s.commit.mu.Unlock()
			entered, hold := make(chan struct{}), make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			// Let go of the writer even when the test fails, or the
			// store could not close.
			defer release()
			held := make(chan error, 1)
			go func() {
				held <- s.commit.do(func(*bbolt.Tx) error {
					close(entered)
					<-hold
					return nil
				})
			}()
			<-queued
			<-entered
			done := make(chan error, 1)
			go func() { done <- w.write(ctx) }()
			select {
			case <-queued:
			case err := <-done:
				t.Fatalf("done while another commit held the writer: %v", err)
			case <-time.After(patience):
				t.Fatal("not queued on the group commit: it waits for the writer on its own")
			}
			release()
			if err := <-held; err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReleasingAnUnmarkedSessionWritesNothing: a sink lets go of a
// session it only acknowledged inputs of (no turn has started, so the
// store never marked it) without a write, which would wait for a commit
// and take a place in it.
func TestReleasingAnUnmarkedSessionWritesNothing(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Origin: &core.Origin{Provider: "chat", Key: "chat:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	var queued atomic.Int64
	s.commit.mu.Lock()
	s.commit.queued = func() { queued.Add(1) }
	s.commit.mu.Unlock()
	released, err := s.ReleaseSink(ctx, "chat", res.Session.ID, 0)
	if err != nil || !released {
		t.Fatalf("release: %v, %v", released, err)
	}
	if n := queued.Load(); n != 0 {
		t.Fatalf("releasing an unmarked session queued %d writes", n)
	}
}

// TestGrowingTheFileDoesNotWaitForReaders: a commit that grows the
// database does not wait for the read transactions open (a remap would,
// holding the writer and every write queued behind it).
func TestGrowingTheFileDoesNotWaitForReaders(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := s.db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	end := func() { once.Do(func() { _ = reader.Rollback() }) }
	defer end()
	big := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: strings.Repeat("x", 64<<10)})
	done := make(chan error, 1)
	go func() {
		for range 64 { // 4 MiB: past any map a fresh file starts with
			if _, err := s.Append(ctx, res.Session.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{big}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		end()
		t.Fatal("the appends waited for a read transaction to end")
	}
}

// TestACommitGathersTheWritersOfTheLast: once a commit of several writes
// is done, the next waits (boundedly) for as many writes before it
// starts, so a steady load of writers shares each sync instead of
// splitting into cohorts that commit in turn.
func TestACommitGathersTheWritersOfTheLast(t *testing.T) {
	s, _ := openTemp(t, Options{})
	c := s.commit
	queued := make(chan struct{}, 16)
	c.mu.Lock()
	c.queued = func() { queued <- struct{}{} }
	c.gatherBound = func(time.Duration) time.Duration { return time.Hour }
	// A write slowed past the batch budget (a loaded machine) would leave
	// the next for another commit: not what this test is about.
	c.batchTime = time.Hour
	c.mu.Unlock()
	// A commit held while two writes queue: they commit together next.
	release := held(t, c, queued)
	a, b := txOfWrite(t, c, false), txOfWrite(t, c, false)
	<-queued
	<-queued
	release()
	if ta, tb := <-a, <-b; ta != tb {
		t.Fatalf("two writes queued together committed apart (%d, %d)", ta, tb)
	}
	// The commit after that one of two waits for two writes, though they
	// come one at a time.
	x := txOfWrite(t, c, false)
	<-queued
	y := txOfWrite(t, c, false)
	<-queued
	if tx, ty := <-x, <-y; tx != ty {
		t.Errorf("the next commit did not gather two writes: %d, %d", tx, ty)
	}
	c.mu.Lock()
	c.gatherBound = func(time.Duration) time.Duration { return 0 }
	c.mu.Unlock()
	// Two more end the wait gather is in, whatever the outcome.
	e, f := txOfWrite(t, c, false), txOfWrite(t, c, false)
	<-e
	<-f
}

// held starts a commit that holds the writer until the returned release
// is called, and waits for it to run; queued is the committer's hook.
func held(t *testing.T, c *committer, queued <-chan struct{}) (release func()) {
	t.Helper()
	entered, hold := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	go func() {
		_ = c.do(func(*bbolt.Tx) error {
			close(entered)
			<-hold
			return nil
		})
	}()
	<-queued
	<-entered
	return release
}

// txOfWrite runs a write (an input or not) on c and tells the id of the
// transaction it committed in.
func txOfWrite(t *testing.T, c *committer, input bool) <-chan int {
	out := make(chan int, 1)
	write := c.write
	if input {
		write = c.writeInput
	}
	go func() {
		id := 0
		err := write(func(tx *bbolt.Tx) ([]core.Change, error) {
			id = tx.ID()
			return nil, nil
		})
		if err != nil {
			t.Error(err)
		}
		out <- id
	}()
	return out
}

// TestAnInputGoesIntoTheNextCommit: an input (what an ack waits for)
// commits in the next commit, ahead of a backlog of other writes larger
// than a commit takes.
func TestAnInputGoesIntoTheNextCommit(t *testing.T) {
	s, _ := openTemp(t, Options{})
	c := s.commit
	queued := make(chan struct{}, 2*maxGroup)
	c.mu.Lock()
	c.queued = func() { queued <- struct{}{} }
	c.mu.Unlock()
	release := held(t, c, queued)
	var backlog []<-chan int
	for range maxGroup + 1 {
		backlog = append(backlog, txOfWrite(t, c, false))
		<-queued
	}
	input := txOfWrite(t, c, true)
	<-queued
	release()
	in := <-input
	last := 0
	for _, b := range backlog {
		last = max(last, <-b)
	}
	if in >= last {
		t.Errorf("the input committed in transaction %d, the backlog's last in %d: it waited behind the backlog", in, last)
	}
}

// TestACommitRunsItsWritesForABoundedTime: a commit leaves to the next
// the writes that would start after it has run writes for its budget,
// except inputs, which all run.
func TestACommitRunsItsWritesForABoundedTime(t *testing.T) {
	s, _ := openTemp(t, Options{})
	c := s.commit
	queued := make(chan struct{}, 16)
	c.mu.Lock()
	c.queued = func() { queued <- struct{}{} }
	c.batchTime = time.Nanosecond
	c.mu.Unlock()
	release := held(t, c, queued)
	var writes, inputs []<-chan int
	for range 3 {
		writes = append(writes, txOfWrite(t, c, false))
		<-queued
		inputs = append(inputs, txOfWrite(t, c, true))
		<-queued
	}
	release()
	seen := map[int]bool{}
	for _, w := range writes {
		id := <-w
		if seen[id] {
			t.Errorf("two writes shared transaction %d past the budget", id)
		}
		seen[id] = true
	}
	first := <-inputs[0]
	for _, in := range inputs[1:] {
		if id := <-in; id != first {
			t.Errorf("inputs committed apart (%d, %d): the budget held one back", first, id)
		}
	}
}

// TestInputsNeverHoldWritesBack: a commit whose inputs alone take longer
// than the budget still runs the first write behind them, so a flood of
// inputs cannot stall the turns' writes and lease renewals.
func TestInputsNeverHoldWritesBack(t *testing.T) {
	s, _ := openTemp(t, Options{})
	c := s.commit
	queued := make(chan struct{}, 16)
	c.mu.Lock()
	c.queued = func() { queued <- struct{}{} }
	c.batchTime = time.Nanosecond
	c.mu.Unlock()
	release := held(t, c, queued)
	write := txOfWrite(t, c, false)
	<-queued
	var inputs []<-chan int
	for range 3 {
		inputs = append(inputs, txOfWrite(t, c, true))
		<-queued
	}
	release()
	first := <-inputs[0]
	for _, in := range inputs[1:] {
		<-in
	}
	if id := <-write; id != first {
		t.Errorf("the write committed in transaction %d, after the inputs' %d: inputs over the budget held it back", id, first)
	}
}
