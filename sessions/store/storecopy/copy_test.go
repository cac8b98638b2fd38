package storecopy_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
	"github.com/switchboardhq/switchboard/sessions/store/storecopy"
)

func openBolt(t *testing.T, clk *clock) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{Now: clk.now})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T, dsn string, clk *clock) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Now: clk.now})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCopy copies a store holding every kind of record and reads both
// through the store contract: the copy answers as the original did.
func TestCopy(t *testing.T) {
	keys := fakeKeys{name: "k1"}
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	src := openBolt(t, clk)
	fill(t, src, keys, clk)
	dst := openPostgres(t, pgtest.DSN(t), clk)

	sum, err := storecopy.Copy(t.Context(), src, dst, keys)
	must(t, err)
	want := storecopy.Summary{
		"agents": 3, "agent versions": 4, "sessions": 7, "events": 27, "queued inputs": 4,
		"dedupe keys": 3, "idempotency keys": 2, "wakes": 2, "sink positions": 3, "sink marks": 3,
		"vaults": 2, "credentials": 2, "environments": 1, "installations": 3, "once keys": 1,
		"destinations": 2, "deliveries": 13, "delivery streams": 7,
		"skills": 2, "skill versions": 3, "skill contents": 5,
		"memory stores": 2, "memory versions": 6, "hourly stats": 2, "schedules": 2, "attachments": 1,
		"attach tokens": 2,
	}
	if got, w := jsonOf(t, sum), jsonOf(t, want); got != w {
		t.Errorf("summary = %s\nwant      %s", got, w)
	}
	a, b := snapshot(t, src, clk.t), snapshot(t, dst, clk.t)
	if a != b {
		t.Fatalf("the copy reads differently:\nbbolt:    %s\npostgres: %s", a, b)
	}
	// Keys and the once key answer on the copy as on the original.
	for name, s := range map[string]backend.Store{"bbolt": src, "postgres": dst} {
		t.Run(name, func(t *testing.T) {
			after(t, s, clk.t)
		})
	}
}

// after checks what only a write shows: the copied keys still dedupe and
// replay, the once key is still used, and new events follow the copied
// log without a gap.
func after(t *testing.T, s backend.Store, now time.Time) {
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_none", Version: 1}},
		Idempotency: &core.Idempotency{Key: "api:sessions:k1", Hash: "h1"}})
	must(t, err)
	if string(res.Replay) != `{"id":"first answer"}` {
		t.Errorf("idempotent replay = %q", res.Replay)
	}
	slack, err := s.SessionByKey(ctx, "slack:T1:C1:1700000000.000100")
	must(t, err)
	res, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: slack.Agent, Origin: slack.Origin}, ExternalKey: slack.Origin.Key,
		Inputs: []core.Event{text("again")}, Dedupe: []string{"slack:delivery-1"}})
	must(t, err)
	if !res.Duplicate || res.Session.ID != slack.ID {
		t.Errorf("a copied dedupe key is not a duplicate: %+v", res)
	}
	evs, err := s.Events(ctx, slack.ID, 0, 1)
	must(t, err)
	var mention core.MessageBody
	must(t, evs[0].Decode(&mention))
	if len(mention.Attachments) != 1 {
		t.Fatalf("the mention's attachments: %+v", mention)
	}
	if data, err := s.GetAttachment(ctx, mention.Attachments[0].ID); err != nil || string(data) != attachedPNG {
		t.Errorf("the screenshot reads %q, %v", data, err)
	}
	fresh, err := s.Once(ctx, "oauth:state:nonce1", now.Add(time.Hour))
	must(t, err)
	if fresh {
		t.Error("the copied once key was used again")
	}
	afterMemory(t, s)
	out, err := s.Append(ctx, slack.ID, core.AppendRequest{Events: []core.Event{core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "more"})}})
	must(t, err)
	if len(out) != 1 || out[0].Seq != slack.LastSeq+1 {
		t.Errorf("append after the copy = %+v, want seq %d", out, slack.LastSeq+1)
	}
	afterStats(t, s, now)
}

// TestCopyRefusesNonEmpty: a second copy into the same database fails
// with one line and changes nothing; so does a copy whose master key does
// not open the sealed values, or differs from the database's.
func TestCopyRefusesNonEmpty(t *testing.T) {
	keys := fakeKeys{name: "k1"}
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	src := openBolt(t, clk)
	fill(t, src, keys, clk)

	t.Run("wrong key", func(t *testing.T) {
		dst := openPostgres(t, pgtest.DSN(t), clk)
		_, err := storecopy.Copy(t.Context(), src, dst, fakeKeys{name: "k2"})
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "master key does not open") {
			t.Fatalf("copy with another key = %v", err)
		}
		if got := snapshot(t, dst, clk.t); got != snapshot(t, openPostgres(t, pgtest.DSN(t), clk), clk.t) {
			t.Fatalf("a refused copy wrote: %s", got)
		}
	})

	dsn := pgtest.DSN(t)
	dst := openPostgres(t, dsn, clk)
	_, err := storecopy.Copy(t.Context(), src, dst, keys)
	must(t, err)
	before := snapshot(t, dst, clk.t)
	// The source grows, so a second copy would change what the target reads.
	_, err = src.CreateAgent(t.Context(), &core.Agent{Name: "late", Model: "anthropic/x", System: "s"})
	must(t, err)

	t.Run("second copy", func(t *testing.T) {
		_, err := storecopy.Copy(t.Context(), src, dst, keys)
		if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), "not empty") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("second copy = %v, want one line saying the database is not empty", err)
		}
		if after := snapshot(t, dst, clk.t); after != before {
			t.Fatalf("the refused copy changed the target:\nbefore: %s\nafter:  %s", before, after)
		}
	})
	t.Run("another key on an empty database", func(t *testing.T) {
		other := pgtest.DSN(t)
		pg := openPostgres(t, other, clk)
		must(t, pg.CheckMasterKey(t.Context(), fakeKeys{name: "k2"}.KeyCheck()))
		_, err := storecopy.Copy(t.Context(), src, pg, keys)
		if !errors.Is(err, postgres.ErrMasterKeyMismatch) {
			t.Fatalf("copy into a database of another key = %v", err)
		}
	})
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// afterMemory checks the copied memory: a deleted file's history, and a
// new version that follows the copied ones, pruning the oldest.
func afterMemory(t *testing.T, s backend.Store) {
	ctx := t.Context()
	h, err := s.MemoryHistory(ctx, "notes", "slack:T1", "b.md")
	must(t, err)
	if len(h) != 2 || !h[0].Deleted || h[0].By != "admin" || h[1].Version != 1 {
		t.Errorf("b.md's history = %+v", h)
	}
	out, err := s.ChangeMemory(ctx, core.MemoryChange{Store: "notes", Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "a.md", Content: "four"})
	must(t, err)
	h, err = s.MemoryHistory(ctx, "notes", "slack:T1", "a.md")
	must(t, err)
	if out[0].Version != 4 || len(h) != 2 || h[1].Version != 3 {
		t.Errorf("a write after the copy = %+v, history %+v", out, h)
	}
}

// afterStats checks the copied counters: the hours fill wrote, and a
// turn completed after the copy adding to its hour's.
func afterStats(t *testing.T, s backend.Store, now time.Time) {
	ctx := t.Context()
	hour := now.UTC().Truncate(time.Hour)
	want := []core.HourStats{
		{Hour: hour.Add(-time.Hour), Turns: 1, Failed: 1, InputTokens: 4, OutputTokens: 1},
		{Hour: hour, Turns: 4, InputTokens: 40, OutputTokens: 12},
	}
	got, err := s.HourlyStats(ctx, time.Time{}, now.Add(time.Hour))
	must(t, err)
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Fatalf("copied hourly stats = %s\nwant %s", g, w)
	}
	api, err := s.ListSessions(ctx, core.SessionFilter{Limit: 1})
	must(t, err)
	_, err = s.Append(ctx, api.Sessions[0].ID, core.AppendRequest{Events: []core.Event{
		internal(core.TypeTurnCompleted, core.TurnCompletedBody{YieldReason: core.ReasonError, Usage: core.Usage{InputTokens: 1, OutputTokens: 1}})}})
	must(t, err)
	want[1] = core.HourStats{Hour: hour, Turns: 5, Failed: 1, InputTokens: 41, OutputTokens: 13}
	got, err = s.HourlyStats(ctx, time.Time{}, now.Add(time.Hour))
	must(t, err)
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Fatalf("hourly stats after a turn = %s\nwant %s", g, w)
	}
}
