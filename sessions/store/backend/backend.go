// Package backend chooses the session store serve runs on, from the
// SWITCHBOARD_STORE setting it owns: the bbolt file in the data directory,
// or a PostgreSQL database (sessions/store/postgres). It declares Store, what the
// gateway needs of either, and checks at Open what a shared database needs
// of the processes using it.
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
)

// Store is what the gateway needs of its session store: the contract of
// core, the commit stream with it, and readiness for GET /readyz.
type Store interface {
	core.Store
	core.VaultStore
	core.InstallationStore
	core.OnceStore
	core.SinkStore
	core.EnvironmentStore
	core.DestinationStore
	core.DeliveryQueue
	core.SkillStore
	core.MemoryStores
	core.MemoryEmbeddings
	core.ConsoleStore
	core.StatsStore
	core.ScheduleStore
	core.AttachTokenStore
	// Ready is "ready", or why not.
	Ready(ctx context.Context) (status string, ok bool)
}

var (
	_ Store = (*bolt.Store)(nil)
	_ Store = (*postgres.Store)(nil)
)

// Options are the store's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_STORE", Flag: "store", Usage: "session store: empty for the bbolt file in the data dir, or a postgres:// DSN"},
	}
}

// Config is the store serve opens.
type Config struct {
	// DSN is the PostgreSQL database's; empty is the bbolt file in the data
	// directory.
	DSN string
}

// Postgres reports whether the store is a PostgreSQL database.
func (c Config) Postgres() bool { return c.DSN != "" }

// scheme is what may be quoted of a value that is not a store: the text
// before "://" when it looks like a URL scheme (never the rest, which may
// hold a password).
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// LoadConfig reads Options into a Config. A value that is no store is an
// error naming SWITCHBOARD_STORE that never quotes more than the scheme.
func LoadConfig(s settings.Values) (Config, error) {
	v := s["SWITCHBOARD_STORE"]
	if v == "" {
		return Config{}, nil
	}
	sch, _, ok := strings.Cut(v, "://")
	if ok && (strings.EqualFold(sch, "postgres") || strings.EqualFold(sch, "postgresql")) {
		return Config{DSN: v}, nil
	}
	const want = "want empty (the bbolt file in the data directory) or a postgres:// DSN"
	if ok && scheme.MatchString(sch) {
		return Config{}, fmt.Errorf("SWITCHBOARD_STORE: unknown scheme %q: %s", sch, want)
	}
	return Config{}, fmt.Errorf("SWITCHBOARD_STORE: not a store: %s", want)
}

// Env is what Open needs besides the Config.
type Env struct {
	// DataDir holds the bbolt file.
	DataDir string
	// KeyCheck is derived from the master key (oauth.Sealer.KeyCheck): a
	// shared database refuses a process whose key differs from the first.
	KeyCheck string
	// LeaseTTL is the runtime's session lease: on PostgreSQL a transaction
	// left idle this long is ended by the server, so a replica paused
	// mid-write holds no lock a takeover waits on (zero: the default
	// lease).
	LeaseTTL time.Duration
	Logger   *slog.Logger
}

// Open opens the configured store. Its errors are one line naming the
// setting to fix, and never quote the DSN's password.
func Open(ctx context.Context, c Config, env Env) (Store, error) {
	if c.Postgres() {
		return openPostgres(ctx, c, env)
	}
	db, err := bolt.Open(BoltFile(env.DataDir), bolt.Options{Logger: env.Logger})
	if err != nil {
		if errors.Is(err, core.ErrLocked) {
			return nil, fmt.Errorf("another switchboard is already serving SWITCHBOARD_DATA_DIR=%s: %w", env.DataDir, err)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	return db, nil
}

// BoltFile is the bbolt store's file in a data directory.
func BoltFile(dataDir string) string { return filepath.Join(dataDir, "switchboard.db") }

// OpenPostgres connects to a PostgreSQL database and migrates its schema,
// without the master key check of Open (store copy makes it in its own
// transaction). Errors are one line naming setting, the flag or variable
// the DSN came from, and never quote the DSN's password.
func OpenPostgres(ctx context.Context, dsn, setting string, opts postgres.Options) (*postgres.Store, error) {
	pg, err := postgres.Open(ctx, dsn, opts)
	if err != nil {
		return nil, oneLine{fmt.Errorf("%s: %w", setting, err)}
	}
	return pg, nil
}

func openPostgres(ctx context.Context, c Config, env Env) (Store, error) {
	pg, err := OpenPostgres(ctx, c.DSN, "SWITCHBOARD_STORE", postgres.Options{Logger: env.Logger, IdleTransactionTimeout: env.LeaseTTL})
	if err != nil {
		return nil, err
	}
	if err := pg.CheckMasterKey(ctx, env.KeyCheck); err != nil {
		pg.Close()
		if errors.Is(err, postgres.ErrMasterKeyMismatch) {
			return nil, fmt.Errorf("SWITCHBOARD_MASTER_KEY: %w: every process sharing SWITCHBOARD_STORE must use the same key", err)
		}
		return nil, oneLine{fmt.Errorf("SWITCHBOARD_STORE: %w", err)}
	}
	return pg, nil
}

// oneLine is err on one line: the driver lists each address it tried on a
// line of its own.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

func (e oneLine) Unwrap() error { return e.err }
