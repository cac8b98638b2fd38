package bolt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/writehealth"
)

// syncBuffer is a log sink safe for the committer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// TestWriteErr: a store whose file cannot grow (a full disk) reports the
// failing commit through WriteErr and Ready (GET /readyz: 503) and logs it once per interval, not once
// per attempt; a refused write (not found) is no failure; the next
// successful commit clears it and says so.
func TestWriteErr(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var out syncBuffer
	s, _ := openTemp(t, Options{Now: clock, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_1", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	if err := s.ScheduleWake(ctx, "ses_missing", clock()); !errors.Is(err, core.ErrNotFound) || s.WriteErr() != nil {
		t.Fatalf("a refused write: %v, WriteErr %v", err, s.WriteErr())
	}

	info, err := s.db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	size := int(info.Size())
	_ = info.Rollback()
	s.db.MaxSize = size // the disk is full
	big := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: strings.Repeat("x", 256<<10)})
	for range 5 {
		if _, err := s.Append(ctx, id, core.AppendRequest{Events: []core.Event{big}}); err == nil {
			t.Fatal("an append past the size limit succeeded")
		}
	}
	if s.WriteErr() == nil {
		t.Fatal("WriteErr is nil after failed commits")
	}
	if status, ok := s.Ready(ctx); ok || status != "store cannot write" {
		t.Fatalf("Ready = %q %v while commits fail", status, ok)
	}
	if n := out.count("cannot write"); n != 1 {
		t.Fatalf("%d log lines for 5 failed commits within the interval, want 1:\n%s", n, out.b.String())
	}
	advance(writehealth.LogEvery)
	if _, err := s.Append(ctx, id, core.AppendRequest{Events: []core.Event{big}}); err == nil {
		t.Fatal("an append past the size limit succeeded")
	}
	if n := out.count("cannot write"); n != 2 {
		t.Fatalf("%d log lines after an interval, want 2", n)
	}

	s.db.MaxSize = 0 // space again
	if _, err := s.Append(ctx, id, core.AppendRequest{Events: []core.Event{big}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteErr(); err != nil {
		t.Fatalf("WriteErr after a successful commit: %v", err)
	}
	if status, ok := s.Ready(ctx); !ok || status != "ready" {
		t.Fatalf("Ready = %q %v after recovery", status, ok)
	}
	if n := out.count("writes again"); n != 1 {
		t.Fatalf("recovery logged %d times", n)
	}
}
