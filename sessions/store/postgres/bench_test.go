package postgres

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

const benchWriters = 64

// BenchmarkAppend64 appends one event per append to 64 sessions at once
// through Store.Append, and in the same run does the same with raw pgx:
// per append a transaction that locks the session's row, inserts the same
// record into a table like events, moves last_seq and commits. All share
// a pool of the store's default size on the same database, and run in
// alternating halves so a change of load on the machine weighs on each.
// ratio is store ÷ raw pgx. notify-ratio compares the store with raw pgx
// that also sends a notification in each transaction, as the store does
// for the other replicas: the server serialises the commits of notifying
// transactions (one flush each, no group commit), which is most of what
// separates the store from raw pgx.
func BenchmarkAppend64(b *testing.B) {
	s, dsn := openTest(b, Options{})
	ctx := b.Context()
	raw, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(ctx, `CREATE TABLE bench_sessions (id text COLLATE "C" PRIMARY KEY, last_seq bigint NOT NULL DEFAULT 0);
		CREATE TABLE bench_events (session_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (session_id, seq))`); err != nil {
		b.Fatal(err)
	}
	var ids []string
	for range benchWriters {
		res, err := s.CreateSession(ctx, core.NewSession{})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, res.Session.ID)
	}
	if _, err := raw.Exec(ctx, `INSERT INTO bench_sessions (id) SELECT unnest($1::text[])`, ids); err != nil {
		b.Fatal(err)
	}
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent,
		core.MessageBody{Text: strings.Repeat("lorem ipsum ", 16)[:190]})
	appendStore := func(w int) error {
		_, err := s.Append(ctx, ids[w], core.AppendRequest{TurnID: "turn_bench", Events: []core.Event{ev}})
		return err
	}
	// appendRaw appends as the store does with none of its logic, and
	// sends notice on a channel of its own unless it is empty.
	appendRaw := func(w int, notice string) error {
		return pgx.BeginFunc(ctx, raw, func(tx pgx.Tx) error {
			var seq int64
			if err := tx.QueryRow(ctx, `SELECT last_seq FROM bench_sessions WHERE id = $1 FOR UPDATE`, ids[w]).Scan(&seq); err != nil {
				return err
			}
			seq++
			e := ev
			e.ID, e.SessionID, e.TurnID, e.CreatedAt, e.Seq = core.NewID(core.PrefixEvent), ids[w], "turn_bench", core.Now(), uint64(seq)
			body, err := core.EncodeJSON(&e)
			if err != nil {
				return err
			}
			batch := &pgx.Batch{}
			batch.Queue(`INSERT INTO bench_events (session_id, seq, body) VALUES ($1, $2, $3)`, ids[w], seq, body)
			batch.Queue(`UPDATE bench_sessions SET last_seq = $2 WHERE id = $1`, ids[w], seq)
			if notice != "" {
				batch.Queue(`SELECT pg_notify('bench', $1)`, notice)
			}
			return tx.SendBatch(ctx, batch).Close()
		})
	}
	payload := strings.Repeat("n", 80) // a notice's size
	appendRawNotify := func(w int) error { return appendRaw(w, payload) }
	b.ResetTimer()
	var storeTime, rawTime, notifyTime time.Duration
	for half := range 2 {
		n := b.N/2 + half*(b.N%2)
		storeTime += runWriters(b, n, appendStore)
		rawTime += runWriters(b, n, func(w int) error { return appendRaw(w, "") })
		notifyTime += runWriters(b, n, appendRawNotify)
	}
	b.StopTimer()
	events := float64(benchWriters * b.N)
	storeRate, rawRate, notifyRate := events/storeTime.Seconds(), events/rawTime.Seconds(), events/notifyTime.Seconds()
	// The baseline is raw pgx writing the same rows; the one with a
	// notify beside each write is the floor of what the store does.
	b.ReportMetric(storeRate, "events/s")
	b.ReportMetric(rawRate, "baseline-events/s")
	b.ReportMetric(storeRate, "notify-events/s")
	b.ReportMetric(notifyRate, "baseline-notify-events/s")
}

// runWriters runs benchWriters goroutines that each write n times and
// returns how long they took.
func runWriters(b *testing.B, n int, write func(w int) error) time.Duration {
	b.Helper()
	var wg sync.WaitGroup
	errs := make([]error, benchWriters)
	start := time.Now()
	for w := range benchWriters {
		wg.Go(func() {
			for range n {
				if err := write(w); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return elapsed
}

// BenchmarkListSessions lists a page of 100 out of 10,000 sessions by
// each filter (storetest.BenchList).
func BenchmarkListSessions(b *testing.B) {
	s, _ := openTest(b, Options{})
	storetest.BenchList(b, s)
}
