package storecopy

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
)

// Deps are what the command needs from the binary.
type Deps struct {
	// DataDir is the data directory when neither --from nor
	// SWITCHBOARD_DATA_DIR names one.
	DataDir string
	// Keys makes the master key's Keys (oauth.NewSealer).
	Keys func(masterKey string) (Keys, error)
}

const usage = "store copy --from DATA_DIR --to postgres://…"

// Command is the store command; its one subcommand, copy, copies the
// bbolt store of a data directory into an empty PostgreSQL database.
func Command(d Deps) command.Command {
	return command.Command{Name: "store", Usage: usage, Summary: "copy a bbolt store into an empty PostgreSQL database",
		Subcommands: []command.Command{{Name: "copy", Usage: usage, Summary: "copy a bbolt store into an empty PostgreSQL database", Flags: []command.Flag{{Name: "from", Value: "DATA_DIR"}, {Name: "to", Value: "DSN"}}}},
		Run: func(ctx context.Context, env command.Env, args []string) int {
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			err := run(ctx, d, env, args)
			switch {
			case err == nil, errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, new(usageError)):
				fmt.Fprintf(env.Stderr, "switchboard: %v\nusage: switchboard %s\n", err, usage)
				return 2
			}
			fmt.Fprintln(env.Stderr, "switchboard: store copy:", err)
			return 1
		}}
}

type usageError string

func (e usageError) Error() string { return string(e) }

func run(ctx context.Context, d Deps, env command.Env, args []string) error {
	if len(args) == 0 || args[0] != "copy" {
		if len(args) > 0 && command.IsHelp(args[0]) {
			fmt.Fprintf(env.Stdout, "usage: switchboard %s\n", usage)
			return nil
		}
		return usageError("store: want the subcommand copy")
	}
	fset := flag.NewFlagSet("store copy", flag.ContinueOnError)
	// Errors are reported once, by Command's Run.
	fset.SetOutput(io.Discard)
	from := fset.String("from", "", "the data directory of the bbolt store (default $SWITCHBOARD_DATA_DIR, else "+d.DataDir+")")
	to := fset.String("to", "", "the PostgreSQL database, a postgres:// DSN (default $SWITCHBOARD_STORE)")
	if err := fset.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(env.Stdout, "usage: switchboard %s\n\nCopies the bbolt store of a stopped gateway's data directory into an empty\nPostgreSQL database. The master key is $SWITCHBOARD_MASTER_KEY, else DATA_DIR/master.key.\n\nflags:\n%s", usage, command.FlagUsage(fset))
			return err
		}
		return usageError(err.Error())
	}
	if fset.NArg() > 0 {
		return usageError(fmt.Sprintf("store copy: unexpected argument %q", fset.Arg(0)))
	}
	dir := cmp.Or(*from, env.Getenv("SWITCHBOARD_DATA_DIR"), d.DataDir)
	dsn := cmp.Or(*to, env.Getenv("SWITCHBOARD_STORE"))
	if c, err := backend.LoadConfig(map[string]string{"SWITCHBOARD_STORE": dsn}); err != nil || !c.Postgres() {
		return usageError("store copy: --to: want a postgres:// DSN")
	}
	masterKey, keySource, err := readMasterKey(env.Getenv, dir)
	if err != nil {
		return err
	}
	keys, err := d.Keys(masterKey)
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	src, err := bolt.Open(backend.BoltFile(dir), bolt.Options{ReadOnly: true})
	switch {
	case errors.Is(err, core.ErrLocked):
		return fmt.Errorf("the store in %s is in use: stop the switchboard serve running on it, then copy (%w)", dir, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no store in %s: want the data directory of a switchboard serve (it holds switchboard.db)", dir)
	case err != nil:
		return err
	}
	defer src.Close()
	dst, err := backend.OpenPostgres(ctx, dsn, "--to", postgres.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer dst.Close()
	sum, err := Copy(ctx, src, dst, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "copied the store in %s:\n", dir)
	if err := sum.Write(env.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "serve on it with SWITCHBOARD_STORE set to the database and SWITCHBOARD_MASTER_KEY to %s\n", keySource)
	return nil
}

// readMasterKey is the key serve ran the data directory with, and where it
// came from: SWITCHBOARD_MASTER_KEY, else the key serve generated into
// master.key. Unlike serve, the copy never generates one.
func readMasterKey(getenv func(string) string, dir string) (key, source string, err error) {
	if k := getenv("SWITCHBOARD_MASTER_KEY"); k != "" {
		return k, "the same key", nil
	}
	path := filepath.Join(dir, "master.key")
	k, err := settings.ReadSecret(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("no master key: set SWITCHBOARD_MASTER_KEY to the key serve ran with (%s does not exist)", path)
	}
	if err != nil {
		return "", "", fmt.Errorf("master key: %w", err)
	}
	return k, "the key in " + path, nil
}
