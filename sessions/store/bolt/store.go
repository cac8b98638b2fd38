package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/writehealth"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Top-level bucket names; doc.go describes what each holds.
const (
	bucketMeta          = "meta"
	bucketAgents        = "agents"
	bucketAgentVersions = "agent_versions"
	bucketAgentNames    = "agent_names"
	bucketSessions      = "sessions"
	bucketSessionKeys   = "session_keys"
	bucketLogs          = "logs"
	bucketStatusCounts  = "status_counts"
	bucketWakes         = "wakes"
	bucketWakeIndex     = "wake_index"
	bucketLeases        = "leases"
	bucketKeys          = "keys"
	bucketKeyTimes      = "key_times"
)

// initialMmap is the address space mapped at open. A commit that grows
// the file past the map remaps it, and a remap waits for every read
// transaction open to end while it holds the writer: the acks and
// appends queued behind it wait for the slowest reader. Address space,
// not memory: the file grows only as data is written.
const initialMmap = 1 << 30

const (
	metaSchemaVersion = "schema_version"
	// schemaVersion 2 keeps a log's newest events in log_tails and the
	// queues in queue, which a binary of version 1 would not read.
	schemaVersion      = 2
	defaultLockTimeout = time.Second
)

var allBuckets = []string{
	bucketMeta, bucketAgents, bucketAgentVersions, bucketAgentNames,
	bucketSessions, bucketSessionKeys, bucketLogs, bucketLogTails, bucketQueue,
	bucketStatusCounts, bucketWakes, bucketWakeIndex, bucketLeases,
	bucketKeys, bucketKeyTimes,
	bucketVaults, bucketCredentials, bucketCredentialSecrets, bucketVaultCredentials,
	bucketDestinations, bucketDestinationSecrets, bucketDestinationFilters,
	bucketOutbox, bucketOutboxDue, bucketOutboxStreams, bucketDeliveryClaims,
	bucketDeliveries, bucketDeliveriesByDest, bucketDeliveriesBySess,
	bucketEnvironments, bucketEnvironmentNames,
	bucketInstallations, bucketInstallationKeys, bucketInstallationTokens,
	bucketOnce, bucketOnceTimes, bucketSinkPositions, bucketSinkActive, bucketSinkClaims,
	bucketRunLeases, bucketReplicas,
	bucketSkills, bucketSkillNames, bucketSkillVersions, bucketSkillContents,
	bucketMemoryStores, bucketMemoryStoreNames, bucketMemoryVersions, bucketMemoryContents, bucketMemoryEmbeddings,
	bucketConsoleSessions, bucketConsoleSessionTimes, bucketConsoleFailures, bucketConsoleFailureTimes,
	bucketHourlyStats,
	bucketSessionsByProvider, bucketSessionsByTenant, bucketSessionTexts,
	bucketSchedules, bucketScheduleDue, bucketAttachments,
	bucketAttachTokens, bucketAttachTokensBySession,
}

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// LockTimeout bounds the wait for the file lock (default 1s), so a
	// second process fails fast instead of hanging.
	LockTimeout time.Duration
	// Now is the store's clock (default time.Now); tests move it to age
	// dedupe keys for Sweep.
	Now func() time.Time
	// ReadOnly opens an existing file for reading (Dump) under a shared
	// lock: several readers, but never beside a process that writes it.
	// Every write fails.
	ReadOnly bool
}

// Store is the bbolt implementation of core.Store.
type Store struct {
	db      *bbolt.DB
	health  *writehealth.Health
	commit  *committer
	commits *core.Commits
	log     *slog.Logger
	now     func() time.Time
	path    string
	boot    string // this Open: leases of earlier ones are void
	// refreshes orders each installation's token refreshes.
	refreshes refreshLocks
	// hot keeps the session records appends wrote, decoded.
	hot hotSessions
	// installations and destinations keep the records reads found,
	// decoded.
	installations decodedInstallations
	destinations  decodedDestinations
}

var _ core.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path. Another process
// holding the file makes it fail with core.ErrLocked after LockTimeout.
func Open(path string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = defaultLockTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	// NoSync stays false: every commit is fsync'd before the caller is
	// answered (ack after commit). The map freelist only changes how free
	// pages are tracked in memory.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:         opts.LockTimeout,
		FreelistType:    bbolt.FreelistMapType,
		ReadOnly:        opts.ReadOnly,
		InitialMmapSize: initialMmap,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, core.ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	init := db.Update
	if opts.ReadOnly {
		init = db.View
	}
	if err := init(func(tx *bbolt.Tx) error {
		if err := initBuckets(tx); err != nil || !tx.Writable() {
			return err
		}
		if err := scopeCredentials(tx); err != nil {
			return err
		}
		if err := movePending(tx); err != nil {
			return err
		}
		return buildFilters(tx)
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	opts.Logger.Debug("session store opened", "path", path)
	commits := core.NewCommits()
	commits.OnLag = func(name string) {
		opts.Logger.Warn("commit stream subscriber fell behind; it catches up from the store", "subscriber", name)
	}
	health := writehealth.New(opts.Logger, opts.Now)
	return &Store{db: db, health: health, commit: &committer{db: db, commits: commits, health: health}, commits: commits, log: opts.Logger, now: opts.Now, path: path, boot: core.NewID("boot"),
		installations: decodedInstallations{what: "installation", max: maxDecodedInstallations},
		destinations:  decodedDestinations{what: "destination", max: maxDecodedDestinations}}, nil
}

// initBuckets creates the buckets and checks the schema version; a
// read-only transaction only checks.
func initBuckets(tx *bbolt.Tx) error {
	for _, name := range allBuckets {
		if !tx.Writable() {
			break // a file of an older release may lack some; Dump skips them
		}
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket([]byte(bucketMeta))
	if meta == nil {
		return errors.New("not a switchboard store: no meta bucket")
	}
	if v := meta.Get([]byte(metaSchemaVersion)); v != nil {
		if len(v) != 4 || binary.BigEndian.Uint32(v) > schemaVersion {
			return fmt.Errorf("database schema %x is newer than this binary (%d)", v, schemaVersion)
		}
		if binary.BigEndian.Uint32(v) == schemaVersion {
			return nil
		}
	}
	if !tx.Writable() {
		return nil
	}
	return meta.Put([]byte(metaSchemaVersion), binary.BigEndian.AppendUint32(nil, schemaVersion))
}

// Close releases the database and its file lock.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

// clock returns the store's current time at the API's precision.
func (s *Store) clock() core.Time { return core.NewTime(s.now()) }

func bkt(tx *bbolt.Tx, name string) *bbolt.Bucket { return tx.Bucket([]byte(name)) }

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v) }

// unixNanos maps t onto the unsigned key space; instants before 1970 sort
// first rather than wrapping around.
func unixNanos(t time.Time) uint64 {
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// keysUntil collects, in order, the keys of a time index (8-byte
// big-endian unix nanoseconds first) while keep holds for their time.
// Collected first: bbolt cursors must not walk a bucket while it is being
// deleted from.
func keysUntil(b *bbolt.Bucket, keep func(t uint64) bool) [][]byte {
	var out [][]byte
	c := b.Cursor()
	for k, _ := c.First(); len(k) >= 8 && keep(binary.BigEndian.Uint64(k[:8])); k, _ = c.Next() {
		out = append(out, bytes.Clone(k))
	}
	return out
}

// viewOne reads one record in a read transaction; what names the call
// in errors ("get session"; "" leaves them as they are).
func viewOne[T any](ctx context.Context, s *Store, what string, get func(*bbolt.Tx) (T, error)) (T, error) {
	return inTx(ctx, what, s.db.View, get)
}

// writeOne is viewOne for a write: put runs in a write transaction.
func writeOne[T any](ctx context.Context, s *Store, what string, put func(*bbolt.Tx) (T, error)) (T, error) {
	return inTx(ctx, what, s.db.Update, put)
}

// commitOne is writeOne through the group committer: put may run more than
// once, and what its last run returns is the answer.
func commitOne[T any](ctx context.Context, s *Store, what string, put func(*bbolt.Tx) (T, error)) (T, error) {
	return inTx(ctx, what, s.commit.do, put)
}

// writeSession is writeOne for a write that changes sessions: put runs in
// the group committer (it may run more than once; its last run answers),
// and the changes it reports are published once the commit is durable.
func writeSession[T any](ctx context.Context, s *Store, what string, put func(*bbolt.Tx) (T, []core.Change, error)) (T, error) {
	return writeVia(ctx, s.commit.write, what, put)
}

// writeVia is writeSession through write (the committer's write or
// writeInput).
func writeVia[T any](ctx context.Context, write func(writeFunc) error, what string, put func(*bbolt.Tx) (T, []core.Change, error)) (T, error) {
	var out, zero T
	if err := ctxErr(ctx); err != nil {
		return zero, err
	}
	err := write(func(tx *bbolt.Tx) (changes []core.Change, err error) {
		out, changes, err = put(tx)
		return changes, err
	})
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// answerOrWrite answers from a read transaction when try does (a replay,
// a duplicate, a refusal: without an fsync, and without failing a shared
// batch), else writes through writeSession as an input: what an ack
// waits for goes into the next commit, ahead of the turns' writes.
func answerOrWrite[R any](ctx context.Context, s *Store, what string, try func(*bbolt.Tx) (*R, error), write func(*bbolt.Tx) (*R, []core.Change, error)) (*R, error) {
	res, err := viewOne(ctx, s, what, try)
	if err != nil || res != nil {
		return res, err
	}
	return writeVia(ctx, s.commit.writeInput, what, write)
}

// updateTx is writeOne for a write that answers nothing but its error.
func (s *Store) updateTx(ctx context.Context, what string, put func(*bbolt.Tx) error) error {
	_, err := inTx(ctx, what, s.db.Update, func(tx *bbolt.Tx) (struct{}, error) { return struct{}{}, put(tx) })
	return err
}

// commitTx is commitOne for a write that answers nothing but its error.
func (s *Store) commitTx(ctx context.Context, what string, put func(*bbolt.Tx) error) error {
	_, err := inTx(ctx, what, s.commit.do, func(tx *bbolt.Tx) (struct{}, error) { return struct{}{}, put(tx) })
	return err
}

// inTx runs fn in a transaction run by run (s.db.View, s.db.Update,
// s.commit.do), once ctx is checked, and returns what fn's last run
// returned; what names the call in its errors ("" leaves them as they
// are).
func inTx[T any](ctx context.Context, what string, run func(func(*bbolt.Tx) error) error, fn func(*bbolt.Tx) (T, error)) (T, error) {
	var out, zero T
	if err := ctxErr(ctx); err != nil {
		return zero, err
	}
	err := run(func(tx *bbolt.Tx) (err error) {
		out, err = fn(tx)
		return err
	})
	switch {
	case err != nil && what != "":
		return zero, fmt.Errorf("%s: %w", what, err)
	case err != nil:
		return zero, err
	}
	return out, nil
}

// listPage reads one page of a bucket keyed by id, in id order, starting
// after the cursor id: the shape of every list of the API.
func listPage[T any](ctx context.Context, s *Store, bucket, after string, limit int, decode func([]byte) (T, error)) ([]T, bool, error) {
	return listWhere(ctx, s, bucket, after, limit, decode, nil)
}

// listWhere is listPage of the records keep accepts (nil: all).
func listWhere[T any](ctx context.Context, s *Store, bucket, after string, limit int, decode func([]byte) (T, error), keep func(T) bool) ([]T, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit = record.ClampLimit(limit)
	out := []T{}
	more := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := bkt(tx, bucket).Cursor()
		k, v := c.Seek([]byte(after))
		if k != nil && after != "" && string(k) == after {
			k, v = c.Next()
		}
		for ; k != nil; k, v = c.Next() {
			item, err := decode(v)
			if err != nil {
				return err
			}
			if keep != nil && !keep(item) {
				continue
			}
			if len(out) == limit {
				more = true
				return nil
			}
			out = append(out, item)
		}
		return nil
	})
	return out, more, err
}

// Subscribe follows the store's commit stream: what each committed write
// did to sessions, published once the commit is durable.
func (s *Store) Subscribe(name string, buf int) *core.Subscription {
	return s.commits.Subscribe(name, buf)
}
