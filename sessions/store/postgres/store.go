package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/writehealth"
)

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now stamps records (created_at, queued_at…; default time.Now); tests
	// move it to age dedupe keys for Sweep. Lease expiry is judged by the
	// database's clock, never by this one.
	Now func() time.Time
	// MaxConns bounds the connection pool (default pgxpool's: 4 or the
	// number of CPUs, whichever is more).
	MaxConns int32
	// ConnectTimeout bounds the first connection and the migrations at
	// Open (default 10 s): an unreachable server stops serve at start.
	ConnectTimeout time.Duration
	// IdleTransactionTimeout is how long the server lets a transaction of
	// this store sit idle between its statements before it ends the
	// connection (default DefaultIdleTransactionTimeout). A replica paused
	// mid-transaction (a SIGSTOP, a VM stall) holds the rows it locked:
	// without this, another replica taking over a session it had leased
	// would wait on that lock for as long as the pause lasts. Serve sets
	// it to the lease TTL, past which the paused replica has lost its
	// leases anyway.
	IdleTransactionTimeout time.Duration
}

// DefaultIdleTransactionTimeout is Options.IdleTransactionTimeout's
// default: the runtime's default lease TTL.
const DefaultIdleTransactionTimeout = 15 * time.Second

// Store is the PostgreSQL implementation of the session store.
type Store struct {
	pool    *pgxpool.Pool
	commits *core.Commits
	health  *writehealth.Health
	log     *slog.Logger
	now     func() time.Time

	// replica names this store in its notifications, channel is the
	// deployment's (see notify.go); listener feeds commits with the
	// changes of the other replicas.
	replica  string
	channel  string
	listener *listener
	notifier *notifier
	// foreground is a small pool of its own for the work requests wait on
	// (core.Foreground: a webhook's input, an API call): it waits for no
	// connection background work holds, so a replica acks promptly while
	// it is busy running turns.
	foreground *pgxpool.Pool

	// stripes order a session's writes within this process from the
	// transaction to the publication of its changes, so the commit stream
	// carries one session's changes in commit order. The session's row
	// lock orders them in the database.
	// Many, so that an input for one session seldom waits behind another
	// session's write that shares its stripe.
	stripes [1024]sync.Mutex
	seed    maphash.Seed
}

// ErrSchemaNewer is returned by Open when the database's schema needs a
// newer binary than this one.
var ErrSchemaNewer = errors.New("the database's schema needs a newer switchboard")

// Open connects to the database named by dsn, applies the schema
// migrations this binary carries (under a lock, so replicas starting
// together apply them once) and returns the store. Errors never hold the
// DSN's password.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.IdleTransactionTimeout <= 0 {
		opts.IdleTransactionTimeout = DefaultIdleTransactionTimeout
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse the DSN: %s", redact(err.Error(), dsn))
	}
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(max(opts.IdleTransactionTimeout.Milliseconds(), 1), 10)
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	cctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %s", redact(err.Error(), dsn))
	}
	fcfg := cfg.Copy()
	fcfg.MaxConns = foregroundConns
	foreground, err := pgxpool.NewWithConfig(cctx, fcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %s", redact(err.Error(), dsn))
	}
	closePools := func() { foreground.Close(); pool.Close() }
	if err := pool.Ping(cctx); err != nil {
		closePools()
		return nil, fmt.Errorf("connect to %s: %s", where(cfg), redact(err.Error(), dsn))
	}
	if err := migrateSchema(cctx, cfg, opts.Logger); err != nil {
		closePools()
		return nil, err
	}
	channel, err := currentChannel(cctx, pool)
	if err != nil {
		closePools()
		return nil, err
	}
	commits := core.NewCommits()
	commits.OnLag = func(name string) {
		opts.Logger.Warn("commit stream subscriber fell behind; it catches up from the store", "subscriber", name)
	}
	s := &Store{
		pool:       pool,
		foreground: foreground,
		commits:    commits,
		health:     writehealth.New(opts.Logger, opts.Now),
		log:        opts.Logger,
		now:        opts.Now,
		seed:       maphash.MakeSeed(),
		replica:    newReplicaID(),
		channel:    channel,
	}
	s.notifier = newNotifier(s.sendNotices, opts.Logger, laggedNotice(s.replica), maxWaitingNotices)
	if s.listener, err = s.startListener(cctx, cfg.ConnConfig); err != nil {
		s.notifier.close()
		closePools()
		return nil, errors.New(redact(err.Error(), dsn))
	}
	opts.Logger.Debug("session store opened", "server", where(cfg), "replica", s.replica)
	return s, nil
}

// where names the server without credentials.
func where(cfg *pgxpool.Config) string {
	return fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
}

// redact removes the DSN's password from a message that may quote it.
func redact(msg, dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err == nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				if pw := dsn[i+3+colon+1 : at]; pw != "" {
					msg = strings.ReplaceAll(msg, pw, "xxxxx")
				}
			}
		}
	}
	return msg
}

// Close stops listening to the other replicas and releases the pool.
func (s *Store) Close() error {
	s.notifier.close()
	s.listener.stop()
	s.foreground.Close()
	s.pool.Close()
	return nil
}

// clock returns the store's current time at the API's precision.
func (s *Store) clock() core.Time { return core.NewTime(s.now()) }

// Subscribe follows the store's commit stream: what each committed write
// did to sessions, published once the commit is durable; this store's
// writes as they commit, the other replicas' as their notifications
// arrive (listen.go).
func (s *Store) Subscribe(name string, buf int) *core.Subscription {
	return s.commits.Subscribe(name, buf)
}

// writeFunc is a write transaction's body; it reports what it changed.
type writeFunc func(tx pgx.Tx) ([]core.Change, error)

// txBody is a write transaction's body laid out in round trips, for the
// writes that run most: open queues the statements sent with the
// transaction's BEGIN (their callbacks run as the results arrive, before
// run), and run works in the transaction and queues on tail what may wait
// until just before the commit, sent in one round trip. open may be nil.
type txBody struct {
	open func(b *pgx.Batch)
	run  func(tx pgx.Tx, tail *pgx.Batch) ([]core.Change, error)
}

// foregroundConns is the size of the foreground pool.
const foregroundConns = 4

// poolFor is the pool for work on ctx: the foreground pool for the work
// requests wait on.
func (s *Store) poolFor(ctx context.Context) *pgxpool.Pool {
	if core.IsForeground(ctx) {
		return s.foreground
	}
	return s.pool
}

// maxAttempts bounds the retries of a transaction the server aborted to
// break a deadlock or a serialization conflict.
const maxAttempts = 5

// write runs fn in a transaction and, once it committed, publishes the
// changes fn reported. sessionID, when given, orders the session's writes
// of this process (see stripes). fn may run more than once (a deadlock
// the server broke is retried), so it derives everything from the
// transaction's state.
func (s *Store) write(ctx context.Context, sessionID string, fn writeFunc) error {
	return s.writeTx(ctx, sessionID, txBody{run: func(tx pgx.Tx, _ *pgx.Batch) ([]core.Change, error) { return fn(tx) }})
}

// writeTx is write for a body laid out in round trips. It runs on the
// caller's goroutine, which may recover panics (a session's turn does): a
// panic here stops the process all the same (core.Crash), since the
// store's commit cannot be trusted after one.
func (s *Store) writeTx(ctx context.Context, sessionID string, body txBody) error {
	defer core.Crash(s.log, "session_id", sessionID)
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if core.CheckText("session id", sessionID) != nil {
		// No session has it, and PostgreSQL would fail the transaction
		// at the first statement that names it.
		return fmt.Errorf("session %q: %w", sessionID, core.ErrNotFound)
	}
	// The connection first, then the stripe: a write waiting for a busy
	// pool then holds no stripe that a write for another session (a
	// request's, on the foreground pool) would wait on.
	conn, err := s.poolFor(ctx).Acquire(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.health.Failed(err)
		}
		return fmt.Errorf("session store: %w", err)
	}
	defer conn.Release()
	if sessionID != "" {
		mu := &s.stripes[maphash.String(s.seed, sessionID)%uint64(len(s.stripes))]
		mu.Lock()
		defer mu.Unlock()
	}
	var changes []core.Change
	var payloads []string
	for attempt := 1; ; attempt++ {
		var refused bool
		changes, payloads, refused, err = s.attempt(ctx, conn, body)
		if err == nil {
			s.health.Succeeded()
			break
		}
		if retryable(err) && attempt < maxAttempts {
			continue
		}
		if !refused && ctx.Err() == nil {
			s.health.Failed(err)
		}
		return err
	}
	s.commits.Publish(changes...)
	s.notifier.add(payloads)
	return nil
}

// attempt runs body once in a transaction: the BEGIN goes with body.open's
// statements, and the COMMIT with the tail, so that a write costs two
// round trips. It returns the notices of the changes, to send once
// committed. refused reports an error of the body's own (a refusal, not
// a failure to write).
func (s *Store) attempt(ctx context.Context, conn *pgxpool.Conn, body txBody) (changes []core.Change, payloads []string, refused bool, err error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	if body.open != nil {
		body.open(b)
	}
	br := conn.SendBatch(ctx, b)
	err = br.Close()
	tx := br.Tx()
	committed := false
	defer func() {
		if !committed {
			// Ends the transaction, whatever part of the tail ran; on a
			// connection the failed COMMIT left idle it does nothing.
			_ = tx.Rollback(ctx)
		}
	}()
	if err != nil {
		return nil, nil, false, err
	}
	tail := &pgx.Batch{}
	changes, err = body.run(tx, tail)
	if err != nil {
		return nil, nil, !retryable(err), err
	}
	if payloads, err = s.notices(changes); err != nil {
		return nil, nil, true, err
	}
	// A statement of the tail that fails stops the rest, the COMMIT
	// included; a transaction some earlier error had aborted commits as
	// a ROLLBACK.
	tail.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	if err := tx.SendBatch(ctx, tail).Close(); err != nil {
		return nil, nil, false, err
	}
	committed = true
	return changes, payloads, false, nil
}

// execRelaxed runs one statement in a transaction of its own that does
// not wait for its WAL flush (synchronous_commit off), for writes whose
// loss in a crash of the database is harmless: a renewal lost only
// shortens a lease or claim (epochs still fence), a release lost only
// delays the next holder, a notice is a hint. They then do not queue for
// the disk behind the writes that must wait for it. The transaction goes
// in one round trip, COMMIT included, so a replica paused mid-call (a
// SIGSTOP, a VM stall) never holds the row it changes: another replica
// taking over a lease would wait on that lock.
func (s *Store) execRelaxed(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error {
		tag = ct
		return nil
	})
	b.Queue(`COMMIT`)
	return tag, s.poolFor(ctx).SendBatch(ctx, b).Close()
}

// do is write for a transaction that changes no session.
func (s *Store) do(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.write(ctx, "", func(tx pgx.Tx) ([]core.Change, error) { return nil, fn(tx) })
}

// retryable reports a transaction the server aborted that succeeds when
// run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// noRow reports a look-up that found no row, or whose argument is text
// PostgreSQL cannot hold (U+0000, invalid UTF-8: SQLSTATE 22021), which no
// row can hold either: both are not found, as in the bbolt store.
func noRow(err error) bool {
	var pe *pgconn.PgError
	return errors.Is(err, pgx.ErrNoRows) || errors.As(err, &pe) && pe.Code == "22021"
}

// isUnique reports a unique constraint violation (optionally of the named
// constraint).
func isUnique(err error, constraint ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return len(constraint) == 0 || pe.ConstraintName == constraint[0]
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// WriteErr is the error of the last commit when it failed, nil once a
// commit succeeds: a store that cannot write is not ready.
func (s *Store) WriteErr() error { return s.health.Err() }

// Ready is the store's readiness, as GET /readyz reports it: "ready", or
// why not ("store unavailable": the database does not answer; "store
// cannot write": the last commit failed).
func (s *Store) Ready(ctx context.Context) (status string, ok bool) {
	if err := s.pool.Ping(ctx); err != nil {
		return "store unavailable", false
	}
	if s.WriteErr() != nil {
		return "store cannot write", false
	}
	return "ready", true
}
